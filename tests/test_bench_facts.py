"""Tests of key facts, fact retention and coverage."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiermem.bench.facts import coverage, coverages, key_facts, present_facts, retention

HISTORY_LINE = (
    "📌 **v0.9.1** shipped `squad nap` (#977): see `src/cli/index.ts`, nap.ts and "
    ".squad/decisions.md. StorageProvider now reads history_shadow."
)


def test_history_line_gives_every_kind_of_fact() -> None:
    assert key_facts(HISTORY_LINE) == {
        "v0.9.1",
        "squad nap",
        "#977",
        "src/cli/index.ts",
        "nap.ts",
        ".squad/decisions.md",
        "storageprovider",
        "history_shadow",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fixed in #12 and PR #3456", {"#12", "#3456"}),
        ("(#977)", {"#977"}),
        ("issues #544–#547", {"#544", "#547"}),
        ("no reference in # 12 or #x", set()),
    ],
)
def test_issue_references(text: str, expected: set[str]) -> None:
    assert key_facts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("run `squad nap` now", {"squad nap"}),
        ("run ` Squad Nap ` now", {"squad nap"}),
        ("`x` is too short, `ok` is not", {"ok"}),
        ("`a` and `bc`", {"bc"}),
        ("`" + "a" * 60 + "`", {"a" * 60}),
        ("`" + "a" * 61 + "`", set()),
        ("`   ` holds only blanks", set()),
        ("an unclosed `tick\nthen `done` later", {"done"}),
        ("```\nplain words\n```", set()),
    ],
)
def test_backticked_spans(text: str, expected: set[str]) -> None:
    assert key_facts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("edit src/cli/index.ts today", {"src/cli/index.ts"}),
        ("read .squad/decisions.md first", {".squad/decisions.md"}),
        ("the fix is in nap.ts.", {"nap.ts"}),
        ("see [the guide](docs/guide.md)", {"docs/guide.md"}),
        ('quoted "README.md" and *notes.txt*', {"readme.md", "notes.txt"}),
        ("a folder: packages/squad-sdk/", {"packages/squad-sdk/"}),
        ("both ASP.NET and Node.js", {"asp.net", "node.js"}),
        ("a choice of CLI/SDK", {"cli/sdk"}),
        ("e.g. this, i.e. that", set()),
        ("a ratio of 3/4 or 1.5", {"1.5"}),
        ("the suffix .toolong stays out", set()),
    ],
)
def test_file_names_and_paths(text: str, expected: set[str]) -> None:
    assert key_facts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("release v0.9.1 today", {"v0.9.1"}),
        ("Node 22.0 or 1.2.3", {"22.0", "1.2.3"}),
        ("V2.1 in capitals", {"v2.1"}),
        ("a.b.c 1.2.3.4", {"1.2.3"}),
        ("target net8.0", set()),
        ("dated 2026-03-10", set()),
    ],
)
def test_versions(text: str, expected: set[str]) -> None:
    assert key_facts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("StorageProvider and getUserName", {"storageprovider", "getusername"}),
        ("IRenderer, API and Deckard are plain words", set()),
        ("ITerminalOutput is", {"iterminaloutput"}),
        ("history_shadow and MAX_SIZE", {"history_shadow", "max_size"}),
        ("_emphasis_ and __init__ are not names", set()),
        ("the _private_name field", {"private_name"}),
        ("hex 0xBF and 2026_03_10 are numbers", set()),
        ("SadConsole.Host.MonoGame", {"sadconsole", "monogame"}),
    ],
)
def test_identifiers(text: str, expected: set[str]) -> None:
    assert key_facts(text) == expected


def test_facts_are_distinct_and_lower_cased() -> None:
    assert key_facts("StorageProvider storageProvider STORAGEPROVIDER #1 #1") == {
        "storageprovider",
        "#1",
    }


def test_retention_counts_raw_facts_kept() -> None:
    raw = "#1 #2 #3 #4"
    assert retention("kept #1 and #3, and a new #9", raw) == 0.5


def test_retention_of_text_without_facts_is_full() -> None:
    assert retention("", "nothing to keep here") == 1.0


def test_retention_needs_facts_not_substrings() -> None:
    # "#12" is a fact of the raw text; "#123" in the derived text is a different fact.
    assert retention("#123", "#12") == 0.0


def test_coverage_is_case_insensitive_substring_share() -> None:
    facts = {"src/cli/index.ts", "#977", "squad nap", "absent"}
    assert coverage(facts, "Ran SQUAD NAP on SRC/CLI/index.ts (#9770)") == 0.75


def test_coverage_of_no_facts_is_full() -> None:
    assert coverage(set(), "") == 1.0


def test_coverages_match_coverage_one_by_one() -> None:
    fact_sets = [frozenset({"a.ts", "#1"}), frozenset({"#2"}), frozenset()]
    text = "A.TS and #1"
    assert coverages(fact_sets, text) == [coverage(facts, text) for facts in fact_sets]
    assert coverages(fact_sets, text) == [1.0, 0.0, 1.0]


def test_present_facts_are_substrings_of_the_lower_cased_text() -> None:
    facts = {"a.ts", "squad nap", "b.ts", "nap run", "#97"}
    assert present_facts(facts, "see A.TS; run Squad Nap\nrun (#977)") == {
        "a.ts",
        "squad nap",
        "#97",
    }


@settings(deadline=None)  # a shared machine makes single examples slow at random
@given(st.sets(st.text(min_size=1, max_size=4)), st.text())
def test_present_facts_agree_with_a_plain_search(facts: set[str], text: str) -> None:
    assert present_facts(facts, text) == {fact for fact in facts if fact in text.lower()}


@settings(deadline=None)
@given(st.text())
def test_every_fact_is_found_in_its_own_text(text: str) -> None:
    assert coverage(key_facts(text), text) == 1.0


def test_a_megabyte_takes_well_under_a_second() -> None:
    paragraph = HISTORY_LINE + " Plain words follow, as most of a history is prose.\n"
    text = paragraph * (1_000_000 // len(paragraph))
    assert len(key_facts(text)) == 8
    # The best of three runs, since other work on a shared machine only ever adds time.
    assert min(_seconds_for_key_facts(text) for _ in range(3)) < 1.0


def _seconds_for_key_facts(text: str) -> float:
    """Time one key_facts call."""
    started = time.perf_counter()
    key_facts(text)
    return time.perf_counter() - started
