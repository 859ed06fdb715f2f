"""JSON with comments and trailing commas (JSONC), as VS Code writes `.vscode/mcp.json`: read
into a tree that knows where each member stands in the text, and changed one member at a time
by splicing the text there, every other byte kept.

Nothing is ever written back from what a file means: `json` would drop the comments, keep
only the last of two members with one name, spell `1e400` as `Infinity` and fail on a lone
surrogate such as `"\\udc80"`. The tree keeps every member (a name twice included) and every
number as it is spelled, and `shape` compares two values strictly (`1` is not `true`), so an
edit can be checked to have changed nothing but the member it meant to.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERAL = re.compile(r"true|false|null")
# What may stand between `{` and the end of its line for an entry to go on a line of its own
# right after it: blanks, and comments that end on that line.
_REST_OF_LINE = re.compile(r"(?:[ \t]+|//[^\n]*|/\*(?:(?!\*/)[^\n])*\*/)*(?=\r?\n)")
_BLANKS = re.compile(r"[ \t]*")
_MAX_DEPTH = 200


@dataclass
class Node:
    """A value of the text: its kind, where it starts and ends, and what it holds."""

    kind: str  # object | array | string | number | literal
    start: int
    end: int
    text: str = ""  # a scalar as spelled
    members: list[Member] = field(default_factory=list)  # an object's, in order, all of them
    items: list[Node] = field(default_factory=list)  # an array's

    def shape(self, ordered: bool = True) -> Any:
        """The value, compared strictly: every member (in order, unless not `ordered`),
        strings by what they say, numbers and literals as spelled."""
        if self.kind == "object":
            found = [(m.name, m.value.shape(ordered)) for m in self.members]
            return ("object", tuple(found if ordered else sorted(found, key=repr)))
        if self.kind == "array":
            return ("array", tuple(item.shape(ordered) for item in self.items))
        if self.kind == "string":
            return ("string", json.loads(self.text))
        return (self.kind, self.text)


@dataclass
class Member:
    """`"name": value` of an object: where its name starts, and its value."""

    name: str
    start: int
    value: Node

    @property
    def end(self) -> int:
        return self.value.end


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, what: str) -> ValueError:
        line = self.text.count("\n", 0, self.at) + 1
        return ValueError(f"{what} at line {line}")

    def skip(self) -> None:
        self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]

    def take(self, char: str) -> bool:
        self.skip()
        if self.text.startswith(char, self.at):
            self.at += 1
            return True
        return False

    def node(self, depth: int = 0) -> Node:
        self.skip()
        if depth > _MAX_DEPTH:
            raise self.fail("nested too deep")
        start = self.at
        if self.take("{"):
            return self._object(start, depth)
        if self.take("["):
            return self._array(start, depth)
        for kind, pattern in (("string", _STRING), ("number", _NUMBER), ("literal", _LITERAL)):
            found = pattern.match(self.text, start)
            if found is not None:
                self.at = found.end()
                if kind == "string":
                    self._string(found.group())
                return Node(kind, start, self.at, found.group())
        raise self.fail("expected a value")

    def _string(self, spelled: str) -> str:
        try:
            said: str = json.loads(spelled)
        except ValueError:
            raise self.fail("a string with an escape JSON does not have") from None
        return said

    def _object(self, start: int, depth: int) -> Node:
        node = Node("object", start, start)
        while not self.take("}"):
            self.skip()
            name = _STRING.match(self.text, self.at)
            if name is None:
                raise self.fail('expected a "name"')
            self.at = name.end()
            if not self.take(":"):
                raise self.fail("expected ':'")
            value = self.node(depth + 1)
            node.members.append(Member(self._string(name.group()), name.start(), value))
            if not self.take(",") and not self.take("}"):
                raise self.fail("expected ',' or '}'")
            if self.text[self.at - 1] == "}":
                break
        node.end = self.at
        return node

    def _array(self, start: int, depth: int) -> Node:
        node = Node("array", start, start)
        while not self.take("]"):
            node.items.append(self.node(depth + 1))
            if not self.take(",") and not self.take("]"):
                raise self.fail("expected ',' or ']'")
            if self.text[self.at - 1] == "]":
                break
        node.end = self.at
        return node


def parse(text: str) -> Node:
    """The tree of a JSONC text; ValueError (saying where) when it is not JSONC."""
    reader = _Reader(text)
    root = reader.node()
    reader.skip()
    if reader.at != len(text):
        raise reader.fail("text after the value")
    return root


def value(node: Node) -> Any:
    """What a value means as `json.loads` reads it (the last member of a name wins)."""
    if node.kind == "object":
        return {m.name: value(m.value) for m in node.members}
    if node.kind == "array":
        return [value(item) for item in node.items]
    if node.kind == "number":
        try:
            return json.loads(node.text)
        except ValueError:  # more digits than Python reads as an int
            return float(node.text)
    return json.loads(node.text)


def loads(text: str) -> Any:
    """What a JSONC text means, as `json.loads` gives it for plain JSON."""
    return value(parse(text))


def members(node: Node, name: str) -> list[Member]:
    """Every member of an object by that name, in order (readers take the last)."""
    return [m for m in node.members if m.name == name]


def shape_of(name: str, data: Any, ordered: bool = True) -> Any:
    """The strict shape of `"name": data` as `render` writes it."""
    return (name, parse(json.dumps(data, ensure_ascii=False)).shape(ordered))


# --- writing a member into an object, and taking it out again ------------------------------


@dataclass(frozen=True)
class Insertion:
    """A member added to a text: where, and the text added (`lead`, the member, `trail`)."""

    at: int
    lead: str
    member: str
    trail: str

    def applied(self, text: str) -> str:
        return text[: self.at] + self.lead + self.member + self.trail + text[self.at :]


def line_end(text: str, at: int) -> str:
    """The line end of the line `at` stands on, else the text's first one, else LF."""
    found = text.find("\n", at)
    found = text.find("\n") if found < 0 else found
    return "\r\n" if found > 0 and text[found - 1] == "\r" else "\n"


def line_indent(text: str, at: int) -> str:
    """The indentation of the line `at` stands on."""
    start = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[start:at]).group()  # type: ignore[union-attr]


def _starts_line(text: str, at: int) -> bool:
    start = text.rfind("\n", 0, at) + 1
    return start > 0 and not text[start:at].strip(" \t")


def indent_unit(text: str) -> str:
    """The indentation one level adds in a file (two spaces when it shows none)."""
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else "  "


def render(name: str, data: Any, indent: str, unit: str, eol: str) -> str:
    """`"name": data`, its lines after the first indented by `indent`, ending in `eol`."""
    body = json.dumps(data, indent=unit, ensure_ascii=False).replace("\n", eol + indent)
    return f"{json.dumps(name, ensure_ascii=False)}: {body}"


def insertion(text: str, node: Node, name: str, data: Any) -> Insertion:
    """How to make `name: data` the first member of the object `node`: on a line of its own
    after the line of `{` (in the file's indentation and line ends), or, in an object written
    on one line, on that line."""
    unit, eol = indent_unit(text), line_end(text, node.start)
    outer = line_indent(text, node.start)
    first = node.members[0] if node.members else None
    rest = _REST_OF_LINE.match(text, node.start + 1)
    if first is not None and not _starts_line(text, first.start):
        compact = f"{json.dumps(name, ensure_ascii=False)}: {json.dumps(data, ensure_ascii=False)}"
        return Insertion(node.start + 1, "", compact, ", ")
    inner = line_indent(text, first.start) if first is not None else outer + unit
    at = rest.end() if rest is not None else node.start + 1
    member = render(name, data, inner, unit, eol)
    if first is not None:
        return Insertion(at, eol + inner, member, ",")
    if "\n" in text[node.start : node.end]:
        return Insertion(at, eol + inner, member, "")
    return Insertion(at, eol + inner, member, eol + outer)


def cut(text: str, member: Member, lead: str, trail: str) -> str | None:
    """The text without a member and the `lead` and `trail` an insertion set around it, when
    both are still there (None when they are not)."""
    start, end = member.start - len(lead), member.end + len(trail)
    if start < 0 or text[start : member.start] != lead or text[member.end : end] != trail:
        return None
    return text[:start] + text[end:]


def without(text: str, node: Node, member: Member) -> str:
    """The text without one member of the object `node`, however it came there: the member,
    the line it stood on when nothing else is there, and one comma (the one after it, else,
    for the last member, the one before it). Comments and blank lines around it stay."""
    at = next(n for n, m in enumerate(node.members) if m is member)
    start, end = member.start, member.end
    if _starts_line(text, start):
        start = text.rfind("\n", 0, start)
        start -= start > 0 and text[start - 1] == "\r"
    after = _BLANKS.match(text, end).end()  # type: ignore[union-attr]
    if text.startswith(",", after):
        end = after + 1 + (start == member.start and text.startswith(" ", after + 1))
        return text[:start] + text[end:]
    if at == 0:
        return text[:start] + text[end:]
    comma = _SPACE.match(text, node.members[at - 1].end).end()  # type: ignore[union-attr]
    if not text.startswith(",", comma):  # a trailing comma after this member, past a comment
        return text[:start] + text[end:]
    return text[:comma] + text[comma + 1 : start] + text[end:]
