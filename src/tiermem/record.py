"""Value classes for tiermem's data: `dataclasses` without its start-up cost.

Importing `dataclasses` also imports `inspect` (and with it `ast`, `dis` and `tokenize`):
about a fifth of the wall time of a command like `tiermem hot show` on a small machine. The
classes here use a small part of it: typed fields with defaults or default factories, value
equality, hashing and immutability for frozen classes, `__slots__`, `replace`, `fields` and
`asdict`. This module gives exactly that, with the same names and behaviour, and type checkers
are shown the standard library's versions, so they check these classes as dataclasses.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import asdict, dataclass, field, fields, replace
else:
    from operator import attrgetter

    _MISSING = object()

    class FrozenInstanceError(AttributeError):
        """An assignment to a field of a frozen record."""

    class Field:
        """One field of a record: its name and how its default is made."""

        __slots__ = ("default", "default_factory", "name")

        def __init__(self, default: object = _MISSING, default_factory: object = _MISSING):
            self.name = ""
            self.default = default
            self.default_factory = default_factory

        def __repr__(self) -> str:
            return f"Field(name={self.name!r})"

    def field(*, default: object = _MISSING, default_factory: object = _MISSING) -> object:
        """A field with a default, or with a function that makes one per instance."""
        return Field(default, default_factory)

    def dataclass(cls=None, /, *, frozen=False, slots=False):
        """Give a class an `__init__`, `__repr__`, `__eq__` (and `__hash__` when frozen)."""

        def wrap(cls):
            return _build(cls, frozen, slots)

        return wrap if cls is None else wrap(cls)

    def fields(obj) -> tuple[Field, ...]:
        """The fields of a record class or instance, in order."""
        return obj.__record_fields__

    def replace(obj, /, **changes):
        """A copy of a record with some fields changed."""
        names = obj.__record_names__
        unknown = set(changes) - set(names)
        if unknown:
            raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
        return type(obj)(**{name: changes.get(name, getattr(obj, name)) for name in names})

    def asdict(obj) -> dict[str, object]:
        """A record as a dict, records inside it (also in lists, tuples and dicts) too."""
        return {name: _plain(getattr(obj, name)) for name in obj.__record_names__}

    def _plain(value):
        if hasattr(type(value), "__record_names__"):
            return asdict(value)
        if isinstance(value, list | tuple):
            return type(value)(_plain(v) for v in value)
        if isinstance(value, dict):
            return {_plain(k): _plain(v) for k, v in value.items()}
        return value

    def _collect(cls) -> tuple[Field, ...]:
        found: list[Field] = []
        for name, annotation in vars(cls).get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            default = cls.__dict__.get(name, _MISSING)
            spec = default if isinstance(default, Field) else Field(default)
            spec.name = name
            if isinstance(default, Field):
                if default.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, default.default)
            found.append(spec)
        return tuple(found)

    def _init_source(specs: tuple[Field, ...], frozen: bool) -> tuple[str, dict[str, object]]:
        """The source of `__init__`, compiled once per class like the standard library does."""
        scope: dict[str, object] = {"_MISSING": _MISSING, "_set": object.__setattr__}
        params, body = [], []
        for n, spec in enumerate(specs):
            if spec.default_factory is not _MISSING:
                scope[f"_factory{n}"] = spec.default_factory
                params.append(f"{spec.name}=_MISSING")
                value = f"_factory{n}() if {spec.name} is _MISSING else {spec.name}"
            elif spec.default is not _MISSING:
                scope[f"_default{n}"] = spec.default
                params.append(f"{spec.name}=_default{n}")
                value = spec.name
            else:
                if any("=" in p for p in params):
                    raise TypeError(f"non-default field {spec.name!r} follows a default field")
                params.append(spec.name)
                value = spec.name
            body.append(
                f"    _set(self, {spec.name!r}, {value})"
                if frozen
                else f"    self.{spec.name} = {value}"
            )
        source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"])
        return source, scope

    def _build(cls, frozen: bool, slots: bool):
        specs = _collect(cls)
        names = tuple(spec.name for spec in specs)
        source, scope = _init_source(specs, frozen)
        exec(source, scope)  # the source is made from the class's own field names
        values = attrgetter(*names) if names else (lambda _: ())
        if slots:
            namespace = {
                k: v
                for k, v in cls.__dict__.items()
                if k not in (*names, "__dict__", "__weakref__")
            }
            namespace["__slots__"] = names
            namespace["__qualname__"] = cls.__qualname__
            cls = type(cls)(cls.__name__, cls.__bases__, namespace)
        init = scope["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = init
        cls.__record_fields__ = specs
        cls.__record_names__ = names
        cls.__match_args__ = names

        def __repr__(self) -> str:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
            return f"{type(self).__qualname__}({inner})"

        def __eq__(self, other: object) -> bool:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return values(self) == values(other)

        cls.__repr__ = __repr__
        cls.__eq__ = __eq__
        if frozen:

            def __hash__(self) -> int:
                return hash(values(self))

            def __setattr__(self, name: str, value: object) -> None:
                raise FrozenInstanceError(f"cannot assign to field {name!r}")

            def __delattr__(self, name: str) -> None:
                raise FrozenInstanceError(f"cannot delete field {name!r}")

            cls.__hash__ = __hash__
            cls.__setattr__ = __setattr__
            cls.__delattr__ = __delattr__
        else:
            cls.__hash__ = None
        return cls


__all__ = ["asdict", "dataclass", "field", "fields", "replace"]
