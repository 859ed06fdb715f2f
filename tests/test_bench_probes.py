"""Tests of replay streams, probes and baselines, on fixtures and on the real corpora."""

import json
import re
import statistics
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from pathlib import Path

import pytest

import corpora
from tiermem.bench.corpus import Event, EventKind, corpus_dirs, last_date, load_events, sessions
from tiermem.bench.facts import coverages
from tiermem.bench.probes import (
    Probe,
    build_probes,
    clean_heading,
    first_section,
    full_history_text,
    grep_top5,
    import_ceiling_text,
    recalled,
    squad_as_is_text,
)
from tiermem.index.tokens import O200K

CORPORA = corpora.CORPORA
CORPUS_NAMES = [
    "Thraka__SadConsole",
    "bradygaster__squad",
    "dkirby-ms__primal-grid",
    "jguadagno__jjgnet-broadcast",
]
PACIFIC = timezone(timedelta(hours=-8))

ADA_LEARNING = """## Learnings

### 2026-03-10: Nap command (#977) — `squad nap`
- Added `src/cli/nap.ts`, wired in src/cli/index.ts.
- StorageProvider gained history_shadow.
#### Detail kept inside the section
- Released in **v0.9.1**.
## Next heading ends the section
- other.ts is not part of it
"""
ADA_FEW_FACTS = "### Quiet day\n- Read the docs, nothing shipped.\n"
BO_LEARNING = (
    "### 📌 Team update (2026-03-11T12:00Z): `squad doctor` checks .squad/team.md\n"
    "- DoctorCheck runs on every start.\n"
)
DECISION = "### 2026-03-10: Use `squad nap` for cleanup\nBy Ada.\n"


def _record(
    seq: int, commit: str, date: str, kind: str, agent: str | None, text: str
) -> dict[str, object]:
    """One line of a replay stream, in the corpus format."""
    path = f".squad/agents/{agent}/history.md" if kind == "history" else ".squad/decisions.md"
    return {
        "seq": seq,
        "commit": commit,
        "date": date,
        "kind": kind,
        "agent": agent,
        "path": path,
        "text": text,
    }


STREAM = [
    _record(1, "c1", "2026-03-10T09:00:00-08:00", "history", "ada", ADA_LEARNING),
    _record(2, "c1", "2026-03-10T09:00:00-08:00", "decision", None, DECISION),
    _record(3, "c2", "2026-03-11T12:00:00+00:00", "history", "bo", BO_LEARNING),
    _record(4, "c2", "2026-03-11T12:00:00+00:00", "inbox", "bo", "### Proposal\nbo wants X"),
    _record(5, "c3", "2026-03-10T08:00:00-08:00", "history", "ada", ADA_FEW_FACTS),
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A small corpus folder: a replay stream and a HEAD `.squad` snapshot."""
    folder = tmp_path / "team__project"
    squad = folder / ".squad"
    (squad / "agents" / "ada").mkdir(parents=True)
    (squad / "decisions" / "inbox").mkdir(parents=True)
    (squad / "agents" / "ada" / "history.md").write_text(ADA_LEARNING, encoding="utf-8")
    (squad / "decisions.md").write_text(DECISION, encoding="utf-8")
    (squad / "decisions" / "inbox" / "bo.md").write_bytes(b"bo proposes `caf\xe9 mode`\n")
    lines = [json.dumps(record, ensure_ascii=False) for record in STREAM]
    (folder / "sessions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _event(seq: int, text: str, agent: str = "ada", kind: EventKind = "history") -> Event:
    """An event for tests that do not need a whole stream."""
    date = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(minutes=seq)
    return Event(seq, f"c{seq}", date, kind, agent, "history.md", text)


# Replay streams


def test_load_events_reads_every_field(corpus: Path) -> None:
    events = load_events(corpus)
    assert [event.seq for event in events] == [1, 2, 3, 4, 5]
    first = events[0]
    assert first.commit == "c1"
    assert first.date == datetime(2026, 3, 10, 9, 0, tzinfo=PACIFIC)
    assert first.kind == "history"
    assert first.agent == "ada"
    assert first.path == ".squad/agents/ada/history.md"
    assert first.text == ADA_LEARNING
    assert events[1].agent is None
    assert all(event.date.tzinfo is not None for event in events)


def test_load_events_takes_a_date_without_offset_as_utc(tmp_path: Path) -> None:
    record = _record(1, "c1", "2026-03-10T09:00:00", "decision", None, "x")
    (tmp_path / "sessions.jsonl").write_text(json.dumps(record), encoding="utf-8")
    assert load_events(tmp_path)[0].date == datetime(2026, 3, 10, 9, tzinfo=UTC)


def test_load_events_rejects_an_unknown_kind(tmp_path: Path) -> None:
    record = _record(1, "c1", "2026-03-10T09:00:00Z", "charter", "ada", "x")
    (tmp_path / "sessions.jsonl").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="charter"):
        load_events(tmp_path)


def test_sessions_group_commits_by_date_then_first_seq(corpus: Path) -> None:
    grouped = sessions(load_events(corpus))
    # c3 is dated an hour before c1 even though it comes last in the stream.
    assert [session.commit for session in grouped] == ["c3", "c1", "c2"]
    assert [event.seq for event in grouped[1].events] == [1, 2]
    assert grouped[2].date == datetime(2026, 3, 11, 12, tzinfo=UTC)


def test_sessions_with_equal_dates_keep_stream_order() -> None:
    same = datetime(2026, 3, 1, tzinfo=UTC)
    events = [
        Event(2, "late", same, "decision", None, "d.md", "b"),
        Event(1, "early", same, "decision", None, "d.md", "a"),
    ]
    assert [session.commit for session in sessions(events)] == ["early", "late"]


def test_last_date_is_the_latest_commit_date(corpus: Path) -> None:
    assert last_date(load_events(corpus)) == datetime(2026, 3, 11, 12, tzinfo=UTC)


def test_last_date_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        last_date([])


def test_corpus_dirs_lists_folders_with_a_stream(tmp_path: Path) -> None:
    for name in ("b_team", "a_team", "no_stream"):
        (tmp_path / name).mkdir()
    (tmp_path / "b_team" / "sessions.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "a_team" / "sessions.jsonl").write_text("", encoding="utf-8")
    assert corpus_dirs(tmp_path) == [tmp_path / "a_team", tmp_path / "b_team"]
    assert corpus_dirs(tmp_path / "missing") == []


# Probes


def test_first_section_runs_to_the_next_heading_of_its_level_or_above() -> None:
    section = first_section(ADA_LEARNING)
    assert section is not None
    assert section.startswith("### 2026-03-10: Nap command")
    assert "#### Detail kept inside the section" in section
    assert "Released in **v0.9.1**." in section
    assert "other.ts" not in section


@pytest.mark.parametrize(
    ("text", "last_line"),
    [
        ("### A\nbody\n### B\nmore", "body"),
        ("### A\nbody\n# Top\nmore", "body"),
        ("### A\nbody\n  ### indented\nmore", "more"),
        ("### A\nbody\n#### deeper\nmore", "more"),
    ],
)
def test_first_section_ends_only_at_column_zero_headings(text: str, last_line: str) -> None:
    section = first_section(text)
    assert section is not None
    assert section.splitlines()[-1] == last_line


def test_text_without_a_section_has_none() -> None:
    assert first_section("## Learnings\n#### Too deep\n###not a heading") is None


@pytest.mark.parametrize(
    ("heading", "query"),
    [
        ("2026-03-10: Nap command (#977) — `squad nap`", "Nap command — squad nap"),
        ("📌 Team update (2026-02-21T22:25Z): Inbox merged", "Team update: Inbox merged"),
        ("RowFontSurface Implementation (2026-03-02)", "RowFontSurface Implementation"),
        ("2025-07: Model catalog refresh (#588)", "Model catalog refresh"),
        ("2026-07-XX — Issue #862: Consolidate helpers", "Issue: Consolidate helpers"),
        ("2026-03-05T[NOW]: PR #131 Close", "PR Close"),
        ("2026-02-24T17-25-08Z : Team consensus", "Team consensus"),
        ("Update (2026-02-22T020714Z): CRLF suite", "Update: CRLF suite"),
        ("Joined (2026-03-14T16:55:20.779Z)", "Joined"),
        (
            "SadBBSClient Sample — Telnet BBS Client (2026)",
            "SadBBSClient Sample — Telnet BBS Client",
        ),
        ("2026 — Rendering Architecture Document", "Rendering Architecture Document"),
        ("CI Pipeline Hardening — March 20, 2026", "CI Pipeline Hardening"),
        ("Wave 1 Audit (2026-02-21) **[CORRECTED]**", "Wave 1 Audit [CORRECTED]"),
        ("Unsafe casts (#318, #320, #321)", "Unsafe casts"),
        ("_Quick_ fix of history_shadow", "Quick fix of history_shadow"),
        ("What's Shipped ✅", "What's Shipped"),
        ("C# interop in 1719 tests", "C# interop in 1719 tests"),
    ],
)
def test_clean_heading(heading: str, query: str) -> None:
    assert clean_heading(heading) == query


def test_build_probes_from_history_sections_with_three_facts(corpus: Path) -> None:
    probes = build_probes(load_events(corpus))
    assert [probe.seq for probe in probes] == [1, 3]
    nap = probes[0]
    assert nap == Probe(
        agent="ada",
        query="Nap command — squad nap",
        facts=frozenset(
            {
                "#977",
                "squad nap",
                "src/cli/nap.ts",
                "src/cli/index.ts",
                "storageprovider",
                "history_shadow",
                "v0.9.1",
            }
        ),
        time=datetime(2026, 3, 10, 9, tzinfo=PACIFIC),
        seq=1,
    )
    assert probes[1].query == "Team update: squad doctor checks .squad/team.md"
    assert probes[1].facts == {"squad doctor", ".squad/team.md", "doctorcheck"}


def test_build_probes_skips_headings_that_clean_to_nothing() -> None:
    event = _event(1, "### 2026-03-10 (#977)\n`a.ts` `b.ts` `c.ts`\n")
    assert build_probes([event]) == []


# Baselines


def test_squad_as_is_is_history_then_decisions(corpus: Path) -> None:
    text = squad_as_is_text(corpus / ".squad", "ada")
    assert text.index("Nap command") < text.index("Use `squad nap` for cleanup")
    assert squad_as_is_text(corpus, "ada") == text


def test_squad_as_is_of_an_agent_without_history_is_decisions(corpus: Path) -> None:
    assert squad_as_is_text(corpus, "bo").strip() == DECISION.strip()


def test_full_history_is_the_agents_history_and_all_decisions(corpus: Path) -> None:
    text = full_history_text(load_events(corpus), "ada")
    assert text == "\n\n".join([ADA_LEARNING, DECISION, ADA_FEW_FACTS])
    assert "bo wants X" not in full_history_text(load_events(corpus), "bo")


def test_import_ceiling_reads_every_file_and_replaces_bad_bytes(corpus: Path) -> None:
    text = import_ceiling_text(corpus)
    assert ADA_LEARNING in text
    assert DECISION in text
    assert "caf\ufffd mode" in text
    assert import_ceiling_text(corpus / ".squad") == text


def test_recall_ceiling_counts_the_probes_head_still_holds_half_of(corpus: Path) -> None:
    from tiermem.bench.full import import_ceilings

    probes = build_probes(load_events(corpus))
    assert [probe.agent for probe in probes] == ["ada", "bo"]
    # bo's team update never reached `.squad/` at HEAD: no search can bring it back.
    assert import_ceilings(corpus, probes)[1] == 0.5
    (corpus / ".squad" / "agents" / "ada" / "history.md").unlink()
    # decisions.md still names `squad nap`: one fact of seven is under half.
    assert import_ceilings(corpus, probes)[1] == 0.0


def test_grep_top5_ranks_by_shared_words_then_seq() -> None:
    events = [
        _event(1, "nap command"),
        _event(2, "the squad nap command"),
        _event(3, "squad nap command", agent="bo"),
        _event(4, "unrelated"),
        _event(5, "Squad NAP, command!"),
        _event(6, "squad"),
        _event(7, "nap"),
        _event(8, "squad nap command", kind="decision"),
        _event(9, "command"),
    ]
    assert grep_top5(events, "ada", "Squad nap: command") == [
        "the squad nap command",
        "Squad NAP, command!",
        "nap command",
        "squad",
        "nap",
    ]


def test_grep_top5_returns_only_events_sharing_a_word() -> None:
    events = [_event(1, "alpha"), _event(2, "beta")]
    assert grep_top5(events, "ada", "beta gamma") == ["beta"]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["#1 and", "#2"], True),
        (["#1 only"], False),
        ([], False),
        (["#1 #2 #3 #4"], True),
    ],
)
def test_recalled_needs_half_the_facts(texts: list[str], expected: bool) -> None:
    assert recalled({"#1", "#2", "#3", "#4"}, texts) is expected


def test_recalled_at_exactly_half() -> None:
    assert recalled({"#1", "#2"}, ["#1"])
    assert not recalled({"#1", "#2", "#3"}, ["#1"])
    assert recalled(set(), [])


# The real corpora


@pytest.fixture(params=CORPUS_NAMES)
def real_corpus(request: pytest.FixtureRequest) -> Path:
    """One of the real team corpora, or a skip where they are not present."""
    folder = CORPORA / str(request.param)
    return corpora.require(folder / "sessions.jsonl").parent


@cache
def _corpus_events(folder: Path) -> list[Event]:
    """The events of a real corpus, read once for all the tests that use them."""
    return load_events(folder)


@cache
def _corpus_probes(folder: Path) -> list[Probe]:
    """The probes of a real corpus, built once for all the tests that use them."""
    return build_probes(_corpus_events(folder))


@cache
def _squad_as_is_by_agent(folder: Path) -> dict[str, str]:
    """The squad-as-is text of each agent that has probes."""
    agents = {probe.agent for probe in _corpus_probes(folder)}
    return {agent: squad_as_is_text(folder, agent) for agent in sorted(agents)}


def test_corpus_probes_are_well_formed(real_corpus: Path) -> None:
    events = _corpus_events(real_corpus)
    probes = _corpus_probes(real_corpus)
    print(
        f"{real_corpus.name}: {len(events)} events, {len(sessions(events))} sessions, "
        f"{len(probes)} probes"
    )
    assert probes
    assert all(len(probe.facts) >= 3 for probe in probes)
    assert all(probe.query and not re.search(r"#\d", probe.query) for probe in probes)
    assert all(probe.time.tzinfo is not None for probe in probes)


def test_corpus_coverage_of_squad_as_is_and_import_ceiling(real_corpus: Path) -> None:
    probes = _corpus_probes(real_corpus)
    as_is = _as_is_coverage(probes, _squad_as_is_by_agent(real_corpus))
    ceiling = coverages([probe.facts for probe in probes], import_ceiling_text(real_corpus))
    print(
        f"{real_corpus.name}: squad-as-is coverage median {statistics.median(as_is):.3f}"
        f" mean {statistics.mean(as_is):.3f};"
        f" import ceiling mean {statistics.mean(ceiling):.3f}"
        f" median {statistics.median(ceiling):.3f}"
    )
    # Everything squad-as-is loads is part of the `.squad` folder, so it can never beat it.
    assert all(low <= high for low, high in zip(as_is, ceiling, strict=True))
    assert 0.0 < statistics.mean(as_is) <= statistics.mean(ceiling) < 1.0


def _as_is_coverage(probes: list[Probe], texts: dict[str, str]) -> list[float]:
    """Coverage of each probe by its agent's text, scoring each agent's probes in one pass."""
    scores: dict[int, float] = {}
    for agent, text in texts.items():
        own = [probe for probe in probes if probe.agent == agent]
        shares = coverages([probe.facts for probe in own], text)
        scores.update(zip((probe.seq for probe in own), shares, strict=True))
    return [scores[probe.seq] for probe in probes]


def test_corpus_squad_as_is_tokens(real_corpus: Path) -> None:
    count_many: Callable[[Sequence[str]], list[int]] = O200K.count_many
    texts = _squad_as_is_by_agent(real_corpus)
    per_agent = dict(zip(texts, count_many(list(texts.values())), strict=True))
    median = statistics.median(per_agent[probe.agent] for probe in _corpus_probes(real_corpus))
    print(f"{real_corpus.name}: squad-as-is tokens median {median:.0f}")
    assert median > 0
