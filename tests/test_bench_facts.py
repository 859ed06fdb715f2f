"""Tests of key facts, fact retention and coverage."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import corpora
import facts_reference as reference
from tiermem.bench.facts import coverage, coverages, key_facts, present_facts, retention
from tiermem.text import facts

CORPORA = corpora.CORPORA

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


def test_a_megabyte_of_history_gives_the_facts_of_its_line() -> None:
    # Unit tests time nothing: tests/facts_timing.py times real memory against the reference.
    paragraph = HISTORY_LINE + " Plain words follow, as most of a history is prose.\n"
    text = paragraph * (1_000_000 // len(paragraph))
    assert key_facts(text) == key_facts(HISTORY_LINE)


# key_facts looks only at the words that hold a dot, a slash, an underscore or a CamelCase
# joint; it must give exactly what the patterns tried at every position gave
# (tests/facts_reference.py).

# Characters and pieces that sit on the edges of the rules: separators (Unicode spaces among
# them), trimmed marks, Unicode letters and digits, a lone surrogate, and the mark bytes.
TRICKY_CHARACTERS = list(
    "`./_#vV0129aezAEZ*':!?()[]{}<>\"|,;-+=@~ \n\t\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u3000"
    "\u2028éÉßİǅ٣²—📌\x00\x01\x02\ud800"
)
TRICKY_PIECES = [
    "StorageProvider", "getUserName", "IRenderer", "API", "history_shadow", "MAX_SIZE",
    "__init__", "_emphasis_", "_private_name", "0xBF", "2026_03_10", "src/cli/index.ts",
    ".squad/decisions.md", "nap.ts", "nap.ts.", "v0.9.1", "V2.1", "1.2.3.4", "net8.0", "e.g.",
    "i.e.", "#977", "```", "**", "ASP.NET", "README.md", "CLI/SDK", "3/4", ".toolong", "...",
    "SadConsole.Host.MonoGame", "a.b", "x.y.z", "aB", "a_b", "v1.", "1.2.",
]  # fmt: skip
tricky_texts = st.one_of(
    st.lists(
        st.one_of(st.sampled_from(TRICKY_CHARACTERS), st.sampled_from(TRICKY_PIECES)),
        max_size=40,
    ).map("".join),
    st.text(),
)
tricky_words = st.lists(st.sampled_from(TRICKY_CHARACTERS + TRICKY_PIECES), max_size=6).map("".join)


@settings(deadline=None, max_examples=1000)
@given(tricky_texts)
def test_key_facts_agree_with_the_reference(text: str) -> None:
    assert key_facts(text) == reference.key_facts(text)


@settings(deadline=None, max_examples=500)
@given(tricky_words)
def test_word_rules_agree_with_the_reference(word: str) -> None:
    # fact_surfaces still tries the patterns everywhere, then keeps what these rules keep.
    assert facts.is_path(word) == reference.is_path(word)
    assert facts.is_camel_case(word) == reference.is_camel_case(word)
    assert facts.is_snake_case(word) == reference.is_snake_case(word)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A Unicode space inside a word of ASCII separators splits it all the same.
        ("see\xa0src/a.ts\u3000or\x85b.md", {"src/a.ts", "b.md"}),
        ("é/x.md and naïve.py", {"é/x.md", "naïve.py"}),
        # A dot ending a sentence ends no fact, but the word may hold others.
        ("shipped v1.2. Then nap.ts. Then a/.", {"v1.2", "nap.ts", "a/"}),
        ("The end.", set()),
        ("v1.2", {"v1.2"}),
        ("٣.٤ in Arabic digits", {"٣.٤"}),
        ("getUserName.\nhistory_shadow", {"getusername", "history_shadow"}),
    ],
)
def test_words_on_the_edges(text: str, expected: set[str]) -> None:
    assert key_facts(text) == expected == reference.key_facts(text)


def _corpus_names() -> list[str]:
    """Return the names of the shared corpora's folders (none where they are absent)."""
    return sorted(path.parent.name for path in CORPORA.glob("*/sessions.jsonl"))


@corpora.needs()
@pytest.mark.parametrize("corpus", _corpus_names())
def test_key_facts_agree_with_the_reference_on_real_memory(corpus: str) -> None:
    folder = CORPORA / corpus
    texts = {str(path): path.read_text(encoding="utf-8") for path in folder.glob(".squad/**/*.md")}
    for line in (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        texts[f"event {event['seq']}"] = event["text"]
    assert len(texts) > 50
    differing = [name for name, text in texts.items() if _disagree(text)]
    assert differing == []


def _disagree(text: str) -> bool:
    """Tell whether key_facts and the reference give a text different facts."""
    return key_facts(text) != reference.key_facts(text)
