"""JSON with comments and trailing commas (JSONC), as VS Code writes `.vscode/mcp.json`: read
for its meaning, and changed one member at a time, every other byte (comments included) kept.

`json` reads plain JSON only, and writing a file back from its meaning would drop the user's
comments, so a JSONC file is read into a tree that knows where each member stands in the
text, and a member is added or taken out by splicing the text there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_MAX_DEPTH = 200


@dataclass
class Node:
    """A value of the text: where it starts and ends, and for an object its members."""

    start: int
    end: int
    value: Any = None
    members: list[Member] = field(default_factory=list)


@dataclass
class Member:
    """`"name": value` of an object: where its name starts, and its value."""

    name: str
    start: int
    value: Node


class _Reader:
    def __init__(self, text: str, unique: bool) -> None:
        self.text = text
        self.at = 0
        self.unique = unique

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
        found = _STRING.match(self.text, start) or _SCALAR.match(self.text, start)
        if found is None:
            raise self.fail("expected a value")
        self.at = found.end()
        return Node(start, self.at, json.loads(found.group()))

    def _object(self, start: int, depth: int) -> Node:
        node = Node(start, start, {})
        while not self.take("}"):
            self.skip()
            name = _STRING.match(self.text, self.at)
            if name is None:
                raise self.fail('expected a "name"')
            self.at = name.end()
            if not self.take(":"):
                raise self.fail("expected ':'")
            value = self.node(depth + 1)
            if self.unique and json.loads(name.group()) in node.value:
                raise self.fail(f"the name {name.group()[:40]} twice")
            node.members.append(Member(json.loads(name.group()), name.start(), value))
            node.value[node.members[-1].name] = value.value
            if not self.take(",") and not self.take("}"):
                raise self.fail("expected ',' or '}'")
            if self.text[self.at - 1] == "}":
                break
        node.end = self.at
        return node

    def _array(self, start: int, depth: int) -> Node:
        node = Node(start, start, [])
        while not self.take("]"):
            node.value.append(self.node(depth + 1).value)
            if not self.take(",") and not self.take("]"):
                raise self.fail("expected ',' or ']'")
            if self.text[self.at - 1] == "]":
                break
        node.end = self.at
        return node


def parse(text: str, unique: bool = False) -> Node:
    """The tree of a JSONC text; ValueError (saying where) when it is not JSONC, or (with
    `unique`) when an object has a name twice, which readers take differently."""
    reader = _Reader(text, unique)
    root = reader.node()
    reader.skip()
    if reader.at != len(text):
        raise reader.fail("text after the value")
    return root


def loads(text: str, unique: bool = False) -> Any:
    """What a JSONC text means, as `json.loads` gives it for plain JSON."""
    return parse(text, unique).value


def member(node: Node, name: str) -> Member | None:
    """The last member of an object by that name (the one a reader keeps)."""
    found = [m for m in node.members if m.name == name]
    return found[-1] if found else None


def _line_indent(text: str, at: int) -> str:
    """The indentation of the line `at` stands on."""
    start = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[start:at]).group()  # type: ignore[union-attr]


def indent_unit(text: str) -> str:
    """The indentation one level adds in a file (two spaces when it shows none)."""
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else "  "


def _rendered(name: str, value: Any, indent: str, unit: str) -> str:
    body = json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)
    return f"{json.dumps(name, ensure_ascii=False)}: {body}"


def insertion(text: str, node: Node, name: str, value: Any) -> tuple[int, str]:
    """Where, and what, to insert to make `name: value` the first member of an object."""
    unit = indent_unit(text)
    outer = _line_indent(text, node.start)
    inner = _line_indent(text, node.members[0].start) if node.members else outer + unit
    new = "\n" + inner + _rendered(name, value, inner, unit)
    if node.members:
        return node.start + 1, new + ","
    if "\n" not in text[node.start : node.end]:
        return node.start + 1, new + "\n" + outer
    return node.start + 1, new


def with_member(text: str, node: Node, name: str, value: Any) -> str:
    """The text with `name: value` as the first member of the object `node`."""
    at, new = insertion(text, node, name, value)
    return text[:at] + new + text[at:]


def without_member(text: str, node: Node, name: str) -> str:
    """The text without the member `name` of the object `node` (every member by that name):
    the member, the comma after it (else, for the last member, the one before it), and the
    line it stood on when nothing else is left there."""
    for found in reversed([m for m in node.members if m.name == name]):
        at = node.members.index(found)
        start, end = found.start, found.value.end
        after = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith(",", after):
            end = after + 1
        elif at > 0:
            comma = _SPACE.match(text, node.members[at - 1].value.end).end()  # type: ignore[union-attr]
            if text.startswith(",", comma):
                text = text[:comma] + text[comma + 1 :]
                start, end = start - 1, end - 1
        text = _cut(text, start, end)
        node.members.remove(found)
    return text


def _cut(text: str, start: int, end: int) -> str:
    """Cut [start, end), and the line it leaves empty."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if line_start and not text[line_start:start].strip() and not text[end:line_end].strip():
        return text[: line_start - 1] + text[line_end:]
    return text[:start] + text[end:]
