"""The names memory is sorted by are spelled once, in `vocabulary.py`: each as a `Literal`
type and as the tuple of its names, each subset a part acts on named there, and the requests
the fronts fill typed by them."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

from tiermem import vocabulary
from tiermem.operations import OPERATIONS
from tiermem.options import options_of
from tiermem.vocabulary import (
    QUEUE,
    TIERS,
    TRUSTED,
    UNTRUSTED,
    trust_of_parts,
    trust_of_source,
    types,
)

SRC = Path(vocabulary.__file__).parent
HOME = Path(vocabulary.__file__)
TIER_WORDS = frozenset({*TIERS, QUEUE})


def _spelled(path: Path) -> list[str]:
    """Where a file spells what only the vocabulary may: a tuple or a set naming two tiers or
    more (a subset of the tiers, which the vocabulary names once), or the trust word.

    A list naming tiers is what one step did (the tiers an audit line records), not a subset
    the code keeps: the type checker holds each of its words to the vocabulary's types."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.Set):
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len([w for w in words if w in TIER_WORDS]) >= 2:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and node.value == UNTRUSTED:
            found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value!r}")
    return found


def test_no_tier_names_or_trust_word_are_spelled_outside_the_vocabulary() -> None:
    assert _spelled(HOME), "the scan sees what the vocabulary spells"
    spelled = [s for path in sorted(SRC.rglob("*.py")) if path != HOME for s in _spelled(path)]
    assert not spelled, f"name these in vocabulary.py: {spelled}"


def _static_types() -> dict[str, tuple[str, ...]]:
    """The `Literal` types as the type checker reads them: `Name = Literal["a", "b"]` under
    `if TYPE_CHECKING:` (made at run time by `types()`, which loads typing)."""
    tree = ast.parse(HOME.read_text(encoding="utf-8"))
    found = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Subscript)
            and ast.unparse(node.value.value) == "Literal"
        ):
            [target] = node.targets
            args = node.value.slice
            elts = args.elts if isinstance(args, ast.Tuple) else [args]
            found[ast.unparse(target)] = tuple(ast.literal_eval(e) for e in elts)
    return found


def test_each_type_names_what_its_tuple_holds() -> None:
    static = _static_types()
    assert {"Tier", "Source", "HotKind", "Trust"} <= set(static)
    made = types()
    assert set(made) == set(static)
    for name, words in static.items():
        assert typing.get_args(made[name]) == words, name


def _words_of(hint: object) -> set[str]:
    """The names a type admits: a Literal's, or those of each Literal of a union."""
    if typing.get_origin(hint) is typing.Literal:
        return set(typing.get_args(hint))
    return {w for arg in typing.get_args(hint) for w in _words_of(arg)}


def test_each_named_subset_holds_only_names_of_its_type() -> None:
    hints = typing.get_type_hints(vocabulary, localns=types())
    named = {n: v for n, v in vars(vocabulary).items() if n.isupper() and n in hints}
    assert {"TIERS", "LASTING_TIERS", "RECALL_TIERS", "UNTRUSTED_SOURCES"} <= set(named)
    for name, value in named.items():
        held = set(value) if isinstance(value, tuple | frozenset) else {value}
        admitted = _words_of(hints[name])
        assert held <= admitted, f"{name}: {held - admitted}"


def test_a_request_field_offering_names_is_typed_by_their_vocabulary() -> None:
    """A field whose choices are a vocabulary is annotated with that vocabulary's type, and
    so is the keyword of `Memory` that takes it (`tests/test_options.py` holds them equal)."""
    typed = {names: name for name, names in vocabulary.TUPLES.items()}
    offering = []
    for op in OPERATIONS:
        written = inspect.get_annotations(op.request)
        hints = typing.get_type_hints(op.request, localns=types())
        for field, item, _ in options_of(op.request):
            if item.choices is None:
                continue
            offering.append(field)
            assert item.choices in typed, f"{op.door}.{field}: choices not of the vocabulary"
            assert typed[item.choices] in written[field].split(" | "), f"{op.door}.{field}"
            assert _words_of(hints[field]) == set(item.choices), f"{op.door}.{field}"
    assert {"tier", "source"} <= set(offering)


def test_a_texts_trust_comes_from_its_source_and_its_parts() -> None:
    assert trust_of_source("web") == trust_of_source("tool") == UNTRUSTED
    assert trust_of_source("agent") == trust_of_source("user") == TRUSTED == ""
    assert trust_of_parts(["", UNTRUSTED, ""]) == UNTRUSTED
    assert trust_of_parts(["", ""]) == trust_of_parts([]) == TRUSTED
