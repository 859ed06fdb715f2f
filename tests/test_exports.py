"""The package's public surface: every result type the API returns is exported, and only those."""

from __future__ import annotations

import inspect
import typing
from dataclasses import is_dataclass

import tiermem
from tiermem.memory import Memory
from tiermem.relevance.ranking import Ranker
from tiermem.storage.archive import Record
from tiermem.storage.config import Config
from tiermem.vocabulary import types

# Names memory.py imports for type checkers only: a few parts, the vocabulary's types (made at
# run time by `vocabulary.types`) and the result types (a command loads only the results it
# returns), each taken from the package's exports.
_ONLY_TYPED = {"Any": typing.Any, "Config": Config, "Ranker": Ranker, "Record": Record}
_ONLY_TYPED |= types()
_ONLY_TYPED |= {name: getattr(tiermem, name) for name in tiermem.__all__ if name[0].isupper()}


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert tiermem.__all__ == sorted(tiermem.__all__)
    for name in tiermem.__all__:
        assert getattr(tiermem, name).__name__ == name


def _returned_types(hint: object) -> set[type]:
    if isinstance(hint, type):
        return {hint}
    return {t for arg in typing.get_args(hint) for t in _returned_types(arg)}


def test_every_result_type_memory_returns_is_exported() -> None:
    returned: set[type] = set()
    for name, method in inspect.getmembers(Memory, inspect.isfunction):
        if not name.startswith("_"):
            hints = typing.get_type_hints(method, localns=_ONLY_TYPED)
            returned |= _returned_types(hints.get("return"))
    results = {t for t in returned if is_dataclass(t)}
    assert results  # the walk found the result classes
    for result in results:
        assert getattr(tiermem, result.__name__) is result, result
