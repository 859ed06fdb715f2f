"""The extractive summarizer: deterministic, within budget, keeping headings and identifiers."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiermem.memory import Memory
from tiermem.scribe.summarize import (
    FLOOR_RATIO,
    SMALL_BYTES,
    VERBATIM_BYTES,
    ExtractiveSummarizer,
    FallbackSummarizer,
    budget_for,
    configured,
)
from tiermem.text.facts import key_facts
from tiermem.text.prose import is_fact_list

# The summarizer promises "at most about budget_bytes": a line's "- " lead may go over by a
# couple of bytes when a heading was left out.
SLACK_BYTES = 8
FILLER = (
    "The team talked it over at some length and agreed to revisit the plan next week if "
    "that still seems useful to everyone involved. "
)
DENSE = (
    "## Publish pipeline\n"
    "The publish job in .github/workflows/publish.yml retries `npm publish` five times (#412). "
    + FILLER
    * 4
    + "\nRoot cause: the registry takes time to propagate v0.9.1 tarballs; see "
    "scripts/publish.mjs. " + FILLER * 3 + "\n\n"
    "## Storage\n"
    "StorageProvider gained a history_shadow option in src/storage/provider.ts (#481). "
    + FILLER * 4
    + "\nWe decided to keep `squad nap` as the command name; release v0.9.2 ships it. "
    + FILLER * 3
    + "\n\n## Open items\n"
    "Flaky test in test/cli/nap.test.ts still blocks #430. " + FILLER * 4
)


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def summarize(text: str, budget: int | None = None) -> str:
    if budget is None:
        budget = budget_for(text, 10)
    return ExtractiveSummarizer().summarize(text, title="notes", budget_bytes=budget)


def test_the_dense_fixture_is_what_the_tests_assume() -> None:
    assert size(DENSE) > SMALL_BYTES
    assert len(key_facts(DENSE)) >= 10


def test_deterministic() -> None:
    first = summarize(DENSE)
    assert all(summarize(DENSE) == first for _ in range(3))
    assert ExtractiveSummarizer().summarize(DENSE, title="notes", budget_bytes=400) == (
        ExtractiveSummarizer().summarize(DENSE, title="notes", budget_bytes=400)
    )


def test_keeps_section_headings() -> None:
    out = summarize(DENSE)
    for heading in ("Publish pipeline", "Storage", "Open items"):
        assert heading in out
    # Headings come out in their original order.
    assert out.index("Publish pipeline") < out.index("Storage") < out.index("Open items")


def test_keeps_the_identifiers_of_a_dense_text() -> None:
    out = summarize(DENSE)
    missing = key_facts(DENSE) - key_facts(out)
    assert not missing
    for fact in ("#412", "#481", "#430", "scripts/publish.mjs", "v0.9.1", "StorageProvider"):
        assert fact.lower() in {f.lower() for f in key_facts(out)}
    assert "squad nap" in out
    assert "history_shadow" in out


def test_drops_the_filler() -> None:
    out = summarize(DENSE)
    assert out.count("revisit the plan") <= 1
    assert size(out) * 4 < size(DENSE)


@pytest.mark.parametrize("budget", [120, 250, 400, 800, 1600])
def test_output_within_budget(budget: int) -> None:
    out = summarize(DENSE, budget)
    assert size(out) <= budget + SLACK_BYTES


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "fix",
                "the",
                "reader",
                "`squad nap`",
                "#12",
                "src/a/b.ts",
                "v1.2.3",
                "StorageProvider",
                "cache_dir",
                "decided",
                "because",
                "é",
                "日本語",
                "\n## Heading\n",
                "\n- bullet",
                "\n\n",
                ". Then",
            ]
        ),
        min_size=40,
        max_size=300,
    ).map(" ".join),
    st.integers(min_value=60, max_value=2500),
)
def test_any_text_within_budget(text: str, budget: int) -> None:
    out = ExtractiveSummarizer().summarize(text, title="t", budget_bytes=budget)
    assert size(out) <= budget + SLACK_BYTES


@pytest.mark.parametrize(
    "text",
    [
        "Fixed the reader (#12).",
        "## Reader\nReadBuffer.fill drops the last chunk; see src/io/reader.ts.\n\n- one\n- two",
        "x" * VERBATIM_BYTES,
        "é" * (VERBATIM_BYTES // 2),
        " ".join(f"Sentence {n} says the scheduler moved on." for n in range(45)),
    ],
)
def test_short_texts_come_back_unchanged(text: str) -> None:
    assert size(text) <= SMALL_BYTES
    assert budget_for(text, 10) == size(text)
    assert summarize(text) == text


@pytest.mark.parametrize("copies", [1, 3, 10, 40])
def test_budget_holds_five_to_one_above_two_kilobytes(copies: int) -> None:
    text = (DENSE + "\n") * copies
    assert size(text) > SMALL_BYTES
    assert budget_for(text, 10) * FLOOR_RATIO <= size(text)
    assert budget_for(text, 10) * 5 <= size(text)


def test_budget_grows_with_the_identifiers_it_must_hold() -> None:
    dense = "\n".join(
        f"Fixed src/pkg{i}/mod{i}.ts for #{1000 + i} (v1.{i}.0, `HandlerNo{i}Impl`). " + FILLER
        for i in range(60)
    )
    plain = (FILLER * 200)[: len(dense)]
    assert size(plain) == size(dense)
    assert not key_facts(plain)
    assert budget_for(plain, 10) == size(plain) // 10
    assert budget_for(plain, 10) < budget_for(dense, 10) <= size(dense) // FLOOR_RATIO


def test_the_configured_summarizer_is_extractive_by_default(tmp_path: Path) -> None:
    made = configured(Memory.init(tmp_path)[0].context)
    assert made.name == "extractive"
    assert made.summarize(DENSE, title="t", budget_bytes=400) == summarize(DENSE, 400)


class _Broken:
    name = "remote-model"

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        raise TimeoutError("endpoint did not answer in 30s")


class _Silent:
    name = "remote-model"

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        return "  \n"


class _Working:
    name = "remote-model"

    def summarize(self, text: str, *, title: str, budget_bytes: int) -> str:
        return "a model summary"


def test_fallback_on_a_primary_that_raises() -> None:
    reasons: list[str] = []
    wrapper = FallbackSummarizer(_Broken(), reasons.append)
    assert wrapper.name == "remote-model"
    out = wrapper.summarize(DENSE, title="notes", budget_bytes=400)
    assert out == summarize(DENSE, 400)
    assert reasons == ["TimeoutError: endpoint did not answer in 30s"]
    assert wrapper.name == "extractive"


def test_fallback_on_an_empty_summary() -> None:
    reasons: list[str] = []
    wrapper = FallbackSummarizer(_Silent(), reasons.append)
    assert wrapper.summarize(DENSE, title="notes", budget_bytes=400) == summarize(DENSE, 400)
    assert len(reasons) == 1
    assert "empty summary" in reasons[0]


def test_no_fallback_when_the_primary_works() -> None:
    reasons: list[str] = []
    wrapper = FallbackSummarizer(_Working(), reasons.append)
    assert wrapper.summarize(DENSE, title="notes", budget_bytes=400) == "a model summary"
    assert reasons == []
    assert wrapper.name == "remote-model"


# --- readable: whole sentences, never a list of names -------------------------------------------

TABLED = (
    "### Release checklist\n"
    "We moved the publish job to `scripts/publish.mjs` because the workflow file kept failing.\n"
    "\n"
    "**Files touched:**\n"
    "- `scripts/publish.mjs` now retries the upload three times before it gives up.\n"
    "- `docs/release.md` says who may cut a release and from which branch.\n"
    "\n"
    "| Step | Owner |\n"
    "|---|---|\n"
    "| tag v0.9.2 | ada |\n"
    "| announce in #release | bo |\n"
    "\n" + FILLER * 12
)


def test_a_summary_is_the_session_own_sentences_never_a_list_of_names() -> None:
    out = summarize(DENSE)
    assert "Refs:" not in out
    for line in out.splitlines():
        assert not is_fact_list(line), line
        for sentence in line.removeprefix("- ").split(". "):
            assert sentence.strip("*. ") in DENSE.replace("\n", " "), sentence


def test_a_lead_in_comes_with_what_it_introduces_and_a_row_with_its_header() -> None:
    out = ExtractiveSummarizer().summarize(TABLED, title="Release checklist", budget_bytes=420)
    lines = out.splitlines()
    assert "Release checklist" not in out  # the entry's title says it
    assert "**Files touched:**" in lines
    follower = lines[lines.index("**Files touched:**") + 1]
    assert follower.startswith(("- `scripts/publish.mjs`", "- `docs/release.md`"))
    # A table row is read with its header: "Step: tag v0.9.2; Owner: ada."
    assert any("Step: tag v0.9.2; Owner: ada." in line for line in lines)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "alpha",
                "beta",
                "gamma.ts",
                "#7",
                "ReadBuffer",
                "decided",
                "because",
                ".",
                "\n",
                "\n- ",
                "\n**Lead:**\n- ",
                "\n## Head\n",
                "averyveryverylongwordwithoutspaces",
            ]
        ),
        min_size=60,
        max_size=400,
    ).map(" ".join),
    st.integers(min_value=60, max_value=900),
)
def test_no_word_is_ever_cut(text: str, budget: int) -> None:
    out = ExtractiveSummarizer().summarize(text, title="t", budget_bytes=budget)
    source = set(text.split())
    assert all(
        word.strip("*-") in {w.strip("*-") for w in source} or word in ("-",)
        for word in out.split()
        if word.strip("*-")
    )


SUBJECT_BULLET = (
    "- 2026-03-23T05:39:03Z — **Tweet publishing 500 fixed**: The scheduled posts stopped going "
    "out on Monday morning for everyone. Root cause: missing service wiring in `startServer()` "
    "in `src/server/index.ts`, so `PublishService` was undefined (#214)."
)


@pytest.mark.parametrize(
    ("bullet", "subject"),
    [
        (SUBJECT_BULLET, "- 2026-03-23T05:39:03Z — **Tweet publishing 500 fixed**: … Root"),
        (
            "- Fixed the publish pipeline: the scheduled posts stopped going out on Monday "
            "morning for everyone. Root cause: missing wiring in `startServer()` (#214).",
            "- Fixed the publish pipeline: … Root",
        ),
    ],
)
def test_a_later_sentence_of_a_bullet_keeps_its_subject(bullet: str, subject: str) -> None:
    filler = "\n".join(f"- We talked about the plan for a while on day {n}." for n in range(60))
    text = f"## Outage\n{filler}\n{bullet}\n"
    summary = ExtractiveSummarizer().summarize(text, title="Outage", budget_bytes=210)
    [line] = [ln for ln in summary.splitlines() if "Root cause" in ln]
    assert line.startswith(subject), line
