"""Forward probes (METRICS.md): what a spawn carries of what the team knew and then used."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import corpora
from tiermem.bench.corpus import Event
from tiermem.bench.forward import (
    EarlierText,
    Section,
    baselines,
    bm25_order,
    oracle_sections,
    probe_of,
    run_forward,
    take_while_fits,
)
from tiermem.cli.main import main
from tiermem.index.tokens import O200K

SHARED = corpora.CORPORA
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def event(seq: int, text: str, agent: str = "ada", kind: str = "history", day: int = 0) -> Event:
    return Event(seq, f"c{seq}", T0 + timedelta(days=day, minutes=seq), kind, agent, "h.md", text)  # type: ignore[arg-type]


FIRST = (
    "### Parser retries\n"
    "- The retry loop lives in `src/parse/retry.ts`; RetryPolicy caps it at 3.\n"
    "- Flaky on CI: see #412.\n"
)
LATER = (
    "### Parser retries, again\n"
    "- Raised RetryPolicy in `src/parse/retry.ts` after #412 came back.\n"
    "- Added `src/parse/backoff.ts`.\n"
)


def earlier_with(*events: Event) -> EarlierText:
    earlier = EarlierText(O200K.count_many)
    earlier.add(list(events))
    return earlier


def test_a_probe_is_a_section_whose_facts_the_team_had_written_before() -> None:
    earlier = earlier_with(event(1, FIRST))
    probe = probe_of(event(2, LATER, day=1), earlier)
    assert probe is not None
    assert probe.agent == "ada" and "Parser retries" in probe.query
    assert {"src/parse/retry.ts", "#412"} <= probe.known
    assert "src/parse/backoff.ts" not in probe.known  # new in this section: not known before
    assert "src/parse" not in probe.known  # no key fact of the section
    # Nothing written before: nothing to carry forward.
    empty = earlier_with()
    assert probe_of(event(2, LATER), empty) is None


def test_a_fact_is_known_where_it_occurs_in_earlier_text_even_inside_a_longer_one() -> None:
    # METRICS.md: the known facts are those that "already occur in text written in earlier
    # sessions", not only those that were key facts there: `retry.ts` occurs in the path.
    earlier = earlier_with(event(1, FIRST))
    later = "### Parser retries, third\n- `retry.ts` again; RetryPolicy and `src/parse/retry.ts`.\n"
    probe = probe_of(event(2, later, day=1), earlier)
    assert probe is not None
    assert {"retry.ts", "retrypolicy", "src/parse/retry.ts"} <= probe.known


def test_the_line_packer_takes_the_lines_whose_facts_match_best_under_their_heading() -> None:
    from tiermem.bench.line_packer import LinePool

    pool = LinePool(O200K.count_many)
    pool.add_sections(
        [
            "### Parser retries\n- The retry loop lives in `src/parse/retry.ts`.\n- Chatter.",
            "### Docs\n- Rewrote `docs/guide.md` for the release.",
        ]
    )
    packed = pool.pack("parser retries", "ada", room=40)
    assert packed.splitlines() == [
        "### Parser retries",
        "- The retry loop lives in `src/parse/retry.ts`.",
    ]
    # A line without a fact is never taken, nor one whose facts no line matching the query
    # holds (its facts are worth nothing), however much room is left.
    roomy = pool.pack("parser retries", "ada", room=400)
    assert "chatter" not in roomy and "docs/guide.md" not in roomy
    assert "docs/guide.md" in pool.pack("guide for the release", "ada", room=400)


def section(text: str, tokens: int, facts: set[str]) -> Section:
    from collections import Counter

    return Section(text, tokens, frozenset(facts), Counter(text.lower().split()))


def test_baselines_read_what_fits_and_skip_what_does_not() -> None:
    big, small = section("big", 500, {"a"}), section("small", 50, {"b"})
    assert take_while_fits([big, small], 100) == [small]
    assert take_while_fits([small, big], 600) == [small, big]


def test_bm25_puts_the_section_sharing_the_query_words_first() -> None:
    other = section("nothing in common here", 10, set())
    match = section("parser retries cap", 10, set())
    assert bm25_order([other, match], "parser retries")[0] is match


def test_the_oracle_packs_only_known_facts_within_the_room() -> None:
    # A section holds a known fact where the fact occurs in its text.
    a = section("xa.ts ya.ts", 40, set())
    b = section("ya.ts za.ts", 40, set())
    c = section("wa.ts", 100, set())
    known = frozenset({"xa.ts", "ya.ts", "za.ts", "wa.ts"})
    assert oracle_sections([a, b, c], known, 80) == [a, b]


def test_baselines_are_cut_to_the_spawns_tokens() -> None:
    earlier = earlier_with(event(1, FIRST))
    probe = probe_of(event(2, LATER, day=1), earlier)
    assert probe is not None
    seen = baselines(earlier, probe, room=2000)
    assert seen["recent"].raw == seen["everything"].raw == 1.0
    # The baselines are the team's own sentences: what they hold, they hold in prose.
    assert seen["recent"].prose == 1.0
    assert baselines(earlier, probe, room=1)["recent"].raw == 0.0


def corpus(folder: Path) -> Path:
    """A small team: ada writes on the parser three days running, bo once."""
    folder.mkdir(parents=True)
    (folder / ".squad" / "agents" / "ada").mkdir(parents=True)
    stream = [
        (1, "ada", FIRST, 0),
        (2, "bo", "### Docs\n- Rewrote `docs/parser.md` for RetryPolicy and #412.\n", 1),
        (3, "ada", LATER, 2),
        (
            4,
            "ada",
            "### Parser retries, third\n- `src/parse/backoff.ts` uses RetryPolicy (#412).\n",
            3,
        ),
    ]
    lines = [
        json.dumps(
            {
                "seq": seq,
                "commit": f"c{seq}",
                "date": (T0 + timedelta(days=day)).isoformat(),
                "kind": "history",
                "agent": agent,
                "path": f".squad/agents/{agent}/history.md",
                "text": text,
            }
        )
        for seq, agent, text, day in stream
    ]
    (folder / "sessions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_replay_asks_each_probe_just_before_its_session(tmp_path: Path) -> None:
    run = run_forward(corpus(tmp_path / "team"), tmp_path / "store")
    assert [r.probe.seq for r in run.results] == [3, 4]
    # The spawn carries what ada wrote before, from a store that knew nothing of the probe.
    first = run.results[0]
    assert first.covered["tiermem"].raw == 1.0 and first.tokens > 0
    summary = run.summary()
    assert summary["probes"] == 2 and summary["coverage"]["tiermem"] == 1.0
    assert summary["coverage_in_prose"]["tiermem"] == 1.0
    assert summary["fact_list_lines"] == 0.0 and summary["fragments"] == 0.0
    assert run.replay is not None and run.replay.sessions == 4


def test_the_command_prints_a_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = corpus(tmp_path / "team")
    assert main(["bench", "forward", str(team), "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "team" in out and "ratio" in out
    argv = ["bench", "forward", str(team), "--out", str(tmp_path / "b"), "--format", "json"]
    assert main(argv) == 0
    [summary] = json.loads(capsys.readouterr().out)["corpora"]
    assert summary["corpus"] == "team" and summary["probes"] == 2


def test_a_sample_draws_the_same_probes_for_the_same_seed(tmp_path: Path) -> None:
    team = corpus(tmp_path / "team")
    once = run_forward(team, tmp_path / "a", sample=1, seed=3)
    again = run_forward(team, tmp_path / "b", sample=1, seed=3)
    assert len(once.results) == 1
    assert [r.probe.seq for r in once.results] == [r.probe.seq for r in again.results]
    assert len(run_forward(team, tmp_path / "c", sample=9).results) == 2  # all, when fewer


def test_the_prompts_can_be_read_beside_their_figures(tmp_path: Path) -> None:
    run = run_forward(corpus(tmp_path / "team"), tmp_path / "store")
    run.write_prompts(tmp_path / "prompts")
    first = sorted((tmp_path / "prompts").iterdir())[0].read_text(encoding="utf-8")
    assert first.startswith("<!-- ada: Parser retries") and "(prose)" in first
    assert "# Spawn: ada" in first


@corpora.needs("Thraka__SadConsole")
def test_on_a_real_team_a_spawn_carries_more_in_prose_than_the_baselines(tmp_path: Path) -> None:
    run = run_forward(SHARED / "Thraka__SadConsole", tmp_path / "store")
    summary = run.summary()
    assert summary["probes"] >= 20
    # What the spawn carries, it carries in sentences an agent can read: no name lists, no
    # lead-in without what it introduces.
    assert summary["coverage_in_prose"]["tiermem"] >= 0.5
    assert summary["ratio_to_best_baseline"] >= 1.15
    assert summary["fact_list_lines"] <= 0.03 and summary["fragments"] <= 0.02
    # The room is the user's limit, and it is used while memory that bears on the task remains.
    assert 0.95 * 2000 <= summary["tokens_median"] <= 2000
    assert summary["room_used_median"] >= 0.95
