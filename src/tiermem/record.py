"""`@record`: a dataclass that costs nothing to import.

The `dataclasses` module imports `inspect`, and with it `ast`, `dis` and `tokenize`: that
alone took about a fifth of `tiermem hot show`'s start-up, and building the methods of every
result class took as much again. A record class gets what a dataclass gets (`__init__`,
`__repr__`, `__eq__`; for a frozen one `__hash__` and refused assignment) from code made the
first time one is created, and it is a dataclass to `dataclasses` itself (`fields`, `replace`,
`asdict`, `is_dataclass`) from the first time that asks, when `dataclasses` is imported.
Defaults, `field(default=..., default_factory=..., metadata=..., init=...)`, keyword
arguments and `__post_init__` work as in a dataclass; nothing else of the dataclass options
is taken.
"""

from __future__ import annotations

import _thread
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar, dataclass_transform, overload

    _T = TypeVar("_T", bound=type)
    _V = TypeVar("_V")


_MISSING = object()
_MADE = _thread.RLock()  # two threads creating a first record: one makes the methods


class _Field:
    """A field of a record class as its body gives it."""

    __slots__ = ("default", "factory", "init", "metadata", "name")

    def __init__(
        self, default: object, factory: object, metadata: Mapping[str, Any], init: bool = True
    ) -> None:
        self.default = default
        self.factory = factory
        self.metadata = metadata
        self.init = init  # False: not an argument of `__init__` (`__post_init__` sets it)
        self.name = ""


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | object = _MISSING,
    metadata: Mapping[str, Any] | None = None,
    init: bool = True,
) -> Any:
    """A field with a default, a default made by a factory, metadata, or left out of
    `__init__` (as in dataclasses)."""
    return _Field(default, default_factory, metadata or {}, init)


class _Lazy:
    """`__dataclass_fields__` and `__dataclass_params__` of a record class, made by
    `dataclasses` on first look (the class then holds them as plain attributes)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type) -> Any:
        _as_dataclass(owner)
        return owner.__dict__[self.name]


def _as_dataclass(cls: type) -> None:
    """Give a record class what `dataclasses` looks for, from a dataclass made the same way."""
    import dataclasses

    with _MADE:
        if not isinstance(cls.__dict__.get("__dataclass_fields__"), _Lazy):
            return
        # Read from the class itself, not with `inspect`: importing it is what records avoid.
        annotations = dict(cls.__dict__["__annotations__"])  # noqa: RUF063
        body: dict[str, Any] = {"__annotations__": annotations}
        for spec in cls.__dict__["__record_fields__"]:
            body[spec.name] = dataclasses.field(
                default=spec.default if spec.default is not _MISSING else dataclasses.MISSING,
                default_factory=(
                    spec.factory if spec.factory is not _MISSING else dataclasses.MISSING
                ),
                metadata=spec.metadata,
                init=spec.init,
            )
        made: type = type(cls.__name__, (), body)
        twin: type = dataclasses.dataclass(frozen=cls.__dict__["__record_frozen__"])(made)
        for name in ("__dataclass_params__", "__dataclass_fields__"):
            setattr(cls, name, getattr(twin, name))


def _specs(cls: type) -> list[_Field]:
    """The fields of a class body, in order, with their defaults (taken off the class where
    a factory makes them, as dataclasses does)."""
    specs = []
    for name in cls.__dict__.get("__annotations__", {}):  # noqa: RUF063 (see `_as_dataclass`)
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, _Field) else _Field(value, _MISSING, {})
        spec.name = name
        if isinstance(value, _Field):
            if spec.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        specs.append(spec)
    return specs


def _source(cls: type, specs: list[_Field], frozen: bool) -> tuple[str, dict[str, Any]]:
    """The code of a record class's `__init__`, and the names it refers to."""
    scope: dict[str, Any] = {"_cls": cls, "_MISSING": _MISSING}
    params = []
    lines = []
    for s in specs:
        if s.factory is not _MISSING:
            scope[f"_f_{s.name}"] = s.factory
            params.append(f"{s.name}=_MISSING")
            value = f"_f_{s.name}() if {s.name} is _MISSING else {s.name}"
        else:
            if s.default is not _MISSING:
                scope[f"_d_{s.name}"] = s.default
            params.append(s.name if s.default is _MISSING else f"{s.name}=_d_{s.name}")
            value = s.name
        if not s.init:  # set from its default, if it has one, and by `__post_init__`
            params.pop()
            if s.default is _MISSING and s.factory is _MISSING:
                continue
            value = f"_f_{s.name}()" if s.factory is not _MISSING else f"_d_{s.name}"
        put = (
            f"object.__setattr__(self, {s.name!r}, {value})"
            if frozen
            else f"self.{s.name} = {value}"
        )
        lines.append(f"    {put}")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    code = [f"def __init__(self, {', '.join(params)}):", *(lines or ["    pass"])]
    return "\n".join(code), scope


# The other methods are the same for every record class, and need no code made for it: a
# record's fields as a tuple (`__record_key__`) are what it is compared and hashed by.
def _key(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """What gives a record's fields as a tuple, in order."""
    if len(names) > 1:
        return attrgetter(*names)
    one = attrgetter(*names) if names else None
    return lambda value: (one(value),) if one is not None else ()


def _repr(self: Any) -> str:
    shown = ", ".join(f"{s.name}={getattr(self, s.name)!r}" for s in self.__record_fields__)
    return f"{self.__class__.__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    key = self.__record_key__
    return key(self) == key(other) if other.__class__ is self.__class__ else NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__record_key__(self))


def _refuse_set(self: Any, name: str, value: object) -> None:
    _frozen_error(name)


def _refuse_del(self: Any, name: str) -> None:
    _frozen_error(name)


def _frozen_error(name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _make_methods(cls: type) -> None:
    """Put the methods of a record class in place (once; the first record made does it)."""
    with _MADE:
        if "__record_init__" not in cls.__dict__:
            return
        specs, frozen = cls.__dict__["__record_fields__"], cls.__dict__["__record_frozen__"]
        code, scope = _source(cls, specs, frozen)
        exec(code, scope)
        cls.__init__ = scope["__init__"]  # type: ignore[misc]
        delattr(cls, "__record_init__")


def _first_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """`__init__` until the first record of its class is made: makes the real methods (a
    thread that got here while another made them finds them made)."""
    owner = next(c for c in type(self).__mro__ if "__record_fields__" in c.__dict__)
    _make_methods(owner)
    owner.__init__(self, *args, **kwargs)  # type: ignore[misc]


def _finish(cls: _T, frozen: bool) -> _T:
    specs = _specs(cls)
    marks: dict[str, object] = {
        "__record_fields__": tuple(specs),
        "__record_frozen__": frozen,
        "__record_init__": True,  # until the first record is made
        "__match_args__": tuple(s.name for s in specs if s.init),
        "__init__": _first_init,
        "__dataclass_fields__": _Lazy("__dataclass_fields__"),
        "__dataclass_params__": _Lazy("__dataclass_params__"),
        "__record_key__": staticmethod(_key(tuple(s.name for s in specs))),
        "__repr__": _repr,
        "__eq__": _eq,
        # Mutable and compared: unhashable, as a dataclass.
        "__hash__": _hash if frozen else None,
    }
    if frozen:
        marks |= {"__setattr__": _refuse_set, "__delattr__": _refuse_del}
    for name, value in marks.items():
        setattr(cls, name, value)
    return cls


def _record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """Make a class a record: `@record` or `@record(frozen=True)`, as `@dataclass`."""
    if cls is None:
        return lambda decorated: _finish(decorated, frozen)
    return _finish(cls, frozen)


if TYPE_CHECKING:

    @overload
    def record(cls: _T, /) -> _T: ...

    @overload
    def record(*, frozen: bool = False) -> Callable[[_T], _T]: ...

    @dataclass_transform(field_specifiers=(field,))
    def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
        return _record(cls, frozen=frozen)

else:
    record = _record


def replace(value: _V, /, **changes: Any) -> _V:
    """A copy of a record with some fields changed (as `dataclasses.replace`, which a
    dataclass that is not a record is handed to)."""
    specs = type(value).__dict__.get("__record_fields__")
    if specs is None:
        import dataclasses

        return dataclasses.replace(value, **changes)  # type: ignore[type-var]
    unknown = set(changes) - {s.name for s in specs}
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field {sorted(unknown)[0]!r}")
    derived = sorted(s.name for s in specs if not s.init and s.name in changes)
    if derived:
        raise ValueError(f"field {derived[0]} is declared with init=False, it cannot be replaced")
    kept = {s.name: getattr(value, s.name) for s in specs if s.init and s.name not in changes}
    return type(value)(**kept, **changes)


def field_names(cls: type) -> tuple[str, ...]:
    """The field names of a record class, in order."""
    return tuple(s.name for s in cls.__dict__["__record_fields__"])


def names(value: object) -> list[tuple[str, Mapping[str, Any]]]:
    """(name, metadata) of each field of a record, or of a dataclass (which imports it)."""
    specs = type(value).__dict__.get("__record_fields__")
    if specs is not None:
        return [(s.name, s.metadata) for s in specs]
    import dataclasses

    return [(f.name, f.metadata) for f in dataclasses.fields(value)]  # type: ignore[arg-type]
