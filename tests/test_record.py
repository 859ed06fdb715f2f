"""tiermem.record behaves like the standard library's dataclasses for what tiermem uses."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from tiermem import record


def _pair(frozen: bool, slots: bool = False) -> tuple[type, type]:
    """The same class declared with each implementation."""
    made = []
    for module in (record, dataclasses):

        class Point:
            """A point with a label and tags."""

            x: int
            y: int = 0
            tags: list[str] = module.field(default_factory=list)
            label: str = module.field(default="p")

        made.append(module.dataclass(frozen=frozen, slots=slots)(Point))
    return made[0], made[1]


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("slots", [False, True])
def test_construction_equality_repr_and_replace_match_dataclasses(
    frozen: bool, slots: bool
) -> None:
    ours, theirs = _pair(frozen, slots)
    calls: list[tuple[tuple[int, ...], dict[str, object]]] = [
        ((1,), {}),
        ((1, 2), {"label": "q"}),
        ((), {"x": 3, "tags": ["a"]}),
    ]
    for args, kwargs in calls:
        a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
        assert repr(a) == repr(b)
        assert [f.name for f in record.fields(a)] == [f.name for f in dataclasses.fields(b)]
        assert record.asdict(a) == dataclasses.asdict(b)
        assert repr(record.replace(a, y=9)) == repr(dataclasses.replace(b, y=9))
        assert a == ours(*args, **kwargs)
        assert a != record.replace(a, x=-1)
        assert (hasattr(a, "__dict__"), type(a).__hash__ is None) == (
            hasattr(b, "__dict__"),
            type(b).__hash__ is None,
        )
    assert ours(1).tags is not ours(1).tags  # a new list per instance


def test_frozen_records_hash_by_value_and_refuse_assignment() -> None:
    ours, _ = _pair(frozen=True)
    a = ours(1, tags=("a",))
    assert hash(a) == hash(ours(1, tags=("a",)))
    assert len({a, ours(1, tags=("a",)), ours(2, tags=())}) == 2
    with pytest.raises(AttributeError):
        a.x = 5
    with pytest.raises(AttributeError):
        del a.x


def test_bad_calls_fail_like_dataclasses() -> None:
    ours, _ = _pair(frozen=False)
    with pytest.raises(TypeError):
        ours()  # x is required
    with pytest.raises(TypeError):
        ours(1, nope=2)
    with pytest.raises(TypeError):
        record.replace(ours(1), nope=2)
    assert ours(1) != (1, 0, [], "p")


def test_asdict_walks_nested_records_in_containers() -> None:
    inner, _ = _pair(frozen=True)

    @record.dataclass
    class Outer:
        """Records inside a record."""

        one: object
        many: list[object]
        by_name: dict[str, object]

    value = Outer(inner(1), [inner(2)], {"k": (inner(3),)})
    assert record.asdict(value) == {
        "one": {"x": 1, "y": 0, "tags": [], "label": "p"},
        "many": [{"x": 2, "y": 0, "tags": [], "label": "p"}],
        "by_name": {"k": ({"x": 3, "y": 0, "tags": [], "label": "p"},)},
    }


def test_the_command_line_path_does_not_import_dataclasses() -> None:
    code = (
        "import sys, tiermem.cli, tiermem.memory, tiermem.index, tiermem.spawn, tiermem.render;"
        "print(sorted(m for m in ('dataclasses', 'inspect', 'tomllib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
