"""Records: dataclasses made without importing `dataclasses`, and dataclasses all the same."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading

import pytest

from reliability import child_env
from tiermem.record import field, field_names, record, replace


@record(frozen=True)
class Point:
    """A frozen record."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@record
class Bag:
    """A mutable record with factories and metadata."""

    name: str
    items: list[str] = field(default_factory=list, metadata={"doc": "what it holds"})
    size: int = field(default=1, metadata={"doc": "how big"})


def test_a_record_is_made_compared_and_shown_as_a_dataclass_would_be() -> None:
    assert Point(1) == Point(1, 0, ()) != Point(1, 2)
    assert Point(1, y=2) != (1, 2)
    assert repr(Point(1, tags=("a",))) == "Point(x=1, y=0, tags=('a',))"
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert {Point(1), Point(1)} == {Point(1)}
    assert Bag("a").items == [] and Bag("a").items is not Bag("a").items
    assert Bag("a") == Bag("a", [], 1)
    assert Bag.__hash__ is None  # mutable and compared: not hashable
    assert Point.__match_args__ == ("x", "y", "tags")
    match Point(3, 4):
        case Point(x, y):
            assert (x, y) == (3, 4)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, z=2)  # type: ignore[call-arg]


def test_a_frozen_record_refuses_assignment() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y  # type: ignore[misc]
    bag = Bag("a")
    bag.size = 3
    assert bag.size == 3


def test_dataclasses_see_a_record_as_a_dataclass() -> None:
    assert dataclasses.is_dataclass(Point) and dataclasses.is_dataclass(Bag("a"))
    assert [f.name for f in dataclasses.fields(Bag)] == ["name", "items", "size"]
    assert dataclasses.fields(Bag)[1].metadata == {"doc": "what it holds"}
    assert dataclasses.replace(Point(1), y=5) == Point(1, 5)
    assert dataclasses.asdict(Bag("a", ["x"])) == {"name": "a", "items": ["x"], "size": 1}
    assert field_names(Bag) == ("name", "items", "size")


def test_replace_copies_with_changes_and_refuses_unknown_fields() -> None:
    point = Point(1, 2, ("a",))
    assert replace(point, y=3) == Point(1, 3, ("a",))
    assert point == Point(1, 2, ("a",))
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(point, z=1)

    @dataclasses.dataclass
    class Plain:
        a: int

    assert replace(Plain(1), a=2) == Plain(2)  # a dataclass that is not a record


def test_threads_making_the_first_records_of_a_class_at_once_all_get_whole_ones() -> None:
    @record
    class Fresh:
        a: int
        b: list[int] = field(default_factory=list)

    made: list[Fresh] = []
    start = threading.Barrier(8)

    def make(n: int) -> None:
        start.wait()
        made.append(Fresh(n))

    threads = [threading.Thread(target=make, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(f.a for f in made) == list(range(8))
    assert all(f.b == [] for f in made)


def test_making_and_comparing_records_never_imports_dataclasses() -> None:
    code = (
        "import sys\n"
        "from tiermem.storage.entries import Entry, TierFile, parse, render\n"
        "t = TierFile('h', {'tier': 'cold'}, '', [Entry(id='c-1', cls='learning', title='t')])\n"
        "assert parse(render(t)) == t\n"
        "print('dataclasses' in sys.modules, 'inspect' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), check=True
    )
    assert done.stdout.split() == ["False", "False"]


@record
class Derived:
    """A record with a field `__init__` leaves to `__post_init__`, and one from a default."""

    agent: str
    id: str = "a1"
    location: str = field(init=False, metadata={"doc": "where it is"})
    seen: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.location = f"archive/{self.agent}/{self.id}.md"


@dataclasses.dataclass
class DerivedTwin:
    """`Derived` as a dataclass."""

    agent: str
    id: str = "a1"
    location: str = dataclasses.field(init=False, metadata={"doc": "where it is"})
    seen: int = dataclasses.field(default=0, init=False)

    def __post_init__(self) -> None:
        self.location = f"archive/{self.agent}/{self.id}.md"


def test_a_field_left_out_of_init_is_set_after_it_as_in_a_dataclass() -> None:
    made, twin = Derived("ada", id="b2"), DerivedTwin("ada", id="b2")
    assert (made.location, made.seen) == (twin.location, twin.seen) == ("archive/ada/b2.md", 0)
    assert repr(made) == repr(twin).replace("DerivedTwin", "Derived")
    assert Derived.__match_args__ == DerivedTwin.__match_args__ == ("agent", "id")
    assert made == Derived("ada", "b2") != Derived("bob", "b2")
    with pytest.raises(TypeError):
        Derived("ada", location="x")  # type: ignore[call-arg]
    moved = replace(made, agent="bob")
    assert moved.location == dataclasses.replace(twin, agent="bob").location == "archive/bob/b2.md"
    with pytest.raises(ValueError, match="init=False"):
        replace(made, location="x")
    with pytest.raises(ValueError, match="init=False"):
        dataclasses.replace(made, location="x")
    assert [(f.name, f.init) for f in dataclasses.fields(made)] == [
        (f.name, f.init) for f in dataclasses.fields(twin)
    ]
    assert dataclasses.asdict(made) == dataclasses.asdict(twin)


@record(frozen=True)
class One:
    """A frozen record of one field."""

    x: int


@record(frozen=True)
class Empty:
    """A frozen record of no field."""


def test_a_frozen_record_hashes_as_its_dataclass_twin() -> None:
    @dataclasses.dataclass(frozen=True)
    class OneTwin:
        x: int

    @dataclasses.dataclass(frozen=True)
    class PointTwin:
        x: int
        y: int = 0
        tags: tuple[str, ...] = ()

    assert hash(One(3)) == hash(OneTwin(3)) and One(3) == One(3) != One(4)
    assert hash(Point(1, 2, ("a",))) == hash(PointTwin(1, 2, ("a",)))
    assert hash(Empty()) == hash(()) and Empty() == Empty() and repr(Empty()) == "Empty()"
    assert One(3).__eq__(OneTwin(3)) is NotImplemented
