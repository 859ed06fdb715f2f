"""What was wrong with a tool's arguments, said in a few words a caller can act on, on one
line: the argument, what it must be (read from the schema its arguments are checked
against: a choice, a list, a bounded number, or null where null is taken), and what was
given instead, never the validator's report.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


def problems(tool: str, schema: dict[str, Any], refused: ValidationError) -> str:
    """What was wrong with a tool's arguments, each in a few words, on one line."""
    said = []
    for error in refused.errors():
        name = _argument(error["loc"])
        if error["type"] == "missing":
            said.append(f"{name} is missing")
        elif error["type"] == "value_error":
            said.append(f"{name}: {error['ctx']['error']}")
        else:
            wanted = _wanted(_schema_at(schema, error["loc"]))
            said.append(f"{name} must be {wanted}, not {_shown(error['input'])}")
    return f"{tool}: " + "; ".join(dict.fromkeys(said))


def _argument(where: tuple[int | str, ...]) -> str:
    """An argument as a caller names it: `'criteria'`, or an item of it, `'criteria'[0]`."""
    if not where:
        return "the arguments"
    return f"argument {str(where[0])!r}" + "".join(f"[{part}]" for part in where[1:])


def _schema_at(schema: dict[str, Any], where: tuple[int | str, ...]) -> dict[str, Any]:
    """The schema of one argument (or of an item of a list argument)."""
    found: dict[str, Any] = schema
    for part in where:
        found = not_null(found)
        found = (
            found.get("items", {})
            if isinstance(part, int)
            else found.get("properties", {}).get(str(part), {})
        )
    return found


def not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema a value must meet when it is given (a nullable's other branch)."""
    branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"]
    return branches[0] if len(branches) == 1 else schema


def _wanted(schema: dict[str, Any]) -> str:
    """What a value of this schema is, in words."""
    nullable = any(b.get("type") == "null" for b in schema.get("anyOf", []))
    schema = not_null(schema)
    if "enum" in schema:
        words = "one of " + ", ".join(repr(v) for v in schema["enum"])
    elif schema.get("type") == "array":
        words = f"a list, each {_wanted(schema.get('items', {}))}"
    else:
        words = _WORDS.get(str(schema.get("type")), "a valid value") + _bounds(schema)
    return f"{words} (or null)" if nullable else words


_WORDS = {"string": "text", "integer": "a whole number", "number": "a number"}
_WORDS |= {"boolean": "true or false", "object": "an object"}


def _bounds(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" of at least {low}"
    return f" of at most {high}" if high is not None else ""


def _shown(value: Any) -> str:
    """A refused value as the caller wrote it, in a few words."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "text" if len(value) > 40 else f"text {json.dumps(value, ensure_ascii=False)}"
    return f"{value!r}"[:40]
