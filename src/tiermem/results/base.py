"""What every result is: a dataclass whose JSON shape is the same for every caller.

The CLI prints `result.to_json()` for `--format json`; the MCP server answers with the same
JSON and derives its output schemas from these classes. A field's JSON name is its own,
except where metadata says otherwise (`cls` is written `class`); a field's `doc` metadata
is its description for programs.

Results are dataclasses with slots: their fields are all they hold.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any

JSON_NAME = "json"
DOC = "doc"


def count(n: int, noun: str) -> str:
    """`1 entry`, `2 entries`, `0 wiki pages`: a number with its noun in the right number."""
    if n == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
    return f"{n:,} {plural}"


def about(text: str, json: str = "") -> dict[str, str]:
    """A field's metadata: its description (and, for `cls`, the JSON name it is written under)."""
    return {DOC: text, **({JSON_NAME: json} if json else {})}


# The `notes` of a write's result: what the user should know (a fallback).
NOTES = about("What the user should know: a summarizer that fell back, and why.")
TRUST = about("'untrusted' for text from tools or the web, or an archive holding some.")


def json_name(item: Field[Any]) -> str:
    """The name a field is written under in JSON."""
    return str(item.metadata.get(JSON_NAME, item.name))


def to_json(value: Any) -> Any:
    """A result (or anything inside one) as plain JSON values."""
    if is_dataclass(value) and not isinstance(value, type):
        return {json_name(item): to_json(getattr(value, item.name)) for item in fields(value)}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


class Result:
    """A value the API returns."""

    def to_json(self) -> dict[str, Any]:
        """The JSON shape that `--format json` prints and MCP tools answer with."""
        data: dict[str, Any] = to_json(self)
        return data
