"""How memory and its metadata are shown: in a terminal, a prompt, JSON or an MCP answer.

Memory comes from clones, tools and the web, so what is shown of it is escaped here, and only
here:

- `control`: text for a terminal or a prompt. Control characters other than tab and line end,
  and the bidirectional controls (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C), are
  written as their escapes (`\\x1b`, `\\u202e`), so an escape sequence is shown, never run,
  and no text is shown reordered; the text kept in the archive is untouched.
- `inline`: one item of metadata (an id, a title, an author, a path) as one line that cannot
  break out of it: no line end, no control character, no run of backticks or tildes that
  could open or close a code fence, no `#` that could start a heading, and at most
  `META_CHARS` characters.
- `fence_safe`: text that cannot close the `<memory>` fence a prompt quotes it in, nor seem
  to, nor open a tag of the prompt's (a chat role, a special token).
- `meta`: metadata shown outside a fence (a search result, a log, an MCP answer): `inline`,
  then `fence_safe`.
- `titled`: an entry's text, which starts with its title, with the title shown as `meta`
  shows it (the rest is the text as recorded: a search result, an entry read whole).
- `printable`: a message as one printable line (a one-line error naming input as given).
- `as_json`: JSON whose text has no raw control character (JSON escapes only the first 32)
  and no raw bidirectional control.
- `Terminal`: a text stream that writes everything through `control`: the command line's
  standard output.

Escaping is done once, where text is shown: a label that goes into a fenced block is made
`inline` and the block `fence_safe` as a whole.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Metadata is shown at most this long: an id or a title, never a page.
META_CHARS = 200

# Every command's output goes through `control`, so nothing is compiled at start-up: the
# patterns below are strings, compiled on first use (and cached by `re`).

# The bidirectional controls: marks, embeddings, overrides and isolates. Invisible, they
# reorder what a reader sees (U+202E shows `exe.txt` for `txt.exe`), so memory shows them.
BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
# Control characters (C0, DEL, C1) but tab and line end, and the bidirectional controls:
# shown, never obeyed by a terminal or a reader.
_CONTROL = {
    c: repr(chr(c))[1:-1] for c in (*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), *BIDI)
}
# In one line of metadata, every control character, the line and paragraph separators, and
# the marks that turn a terminal's text around (bidirectional marks, overrides and isolates).
_BREAKING = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
# Three backticks or tildes open or close a code fence where they start a line.
_FENCE_RUN = r"`{3,}|~{3,}"
# What JSON leaves raw that a terminal or a reader obeys: DEL, C1, the separators some
# readers take for line ends, and the bidirectional controls.
_JSON_RAW = "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"


def _escape(char: str) -> str:
    """A character as Python writes it in a string: `\\x1b`, `\\n`, `\\u2028`."""
    return repr(char)[1:-1]


def control(text: str) -> str:
    """Text for a terminal or a prompt: lines and tabs kept (a Windows line end read as one),
    other control characters shown as their escapes."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_CONTROL)


def inline(value: str, limit: int = META_CHARS) -> str:
    """One item of metadata as one line that can neither end nor start a block: control
    characters and separators escaped, fence runs and a leading `#` backslash-escaped, cut
    to `limit` characters with `…`."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    value = re.sub(_BREAKING, lambda m: _escape(m.group()), value)
    if "`" in value or "~" in value:
        value = re.sub(_FENCE_RUN, lambda m: "".join("\\" + ch for ch in m.group()), value)
    return "\\" + value if value.startswith("#") else value


def meta(value: str, limit: int = META_CHARS) -> str:
    """Metadata shown outside a fence: one inert line (`inline`) that opens no tag."""
    return fence_safe(inline(value, limit))


def titled(text: str, title: str) -> tuple[str, int]:
    """An entry's text with its first line, its title, shown as `meta` shows it; and how
    many characters that moved what follows (0 for a text whose first line is not `title`)."""
    rest = text[len(title) :]
    if not title or not text.startswith(title) or rest[:1] not in ("", "\n"):
        return text, 0
    shown = meta(title)
    return shown + rest, len(shown) - len(title)


def moved(spans: tuple[tuple[int, int], ...], title: str, by: int) -> tuple[tuple[int, int], ...]:
    """Offsets into an entry's text, after `titled` moved what follows its title `by`."""
    end = len(title)
    return tuple((a + by if a >= end else a, b + by if b > end else b) for a, b in spans)


def metas(values: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Each of a list of metadata values, as `meta` shows it."""
    return tuple(meta(v) for v in values)


def printable(message: str) -> str:
    """A message as one printable line: every character a terminal would not print as
    itself (a control, format or separator character) written as its escape."""
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in message)


def as_json(data: Any, indent: int | None = 2) -> str:
    """JSON text with every control character escaped: the same value once parsed."""
    import json

    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return re.sub(_JSON_RAW, lambda m: f"\\u{ord(m.group()):04x}", text)


class Terminal:
    """A text stream (standard output) that shows control characters, never sends them: what
    the command line prints goes through `control`. Anything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write text as `control` shows it."""
        written: int = self.stream.write(control(text))
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


# --- the fence ------------------------------------------------------------------------

# The brackets and slashes a reader could take for those of a tag, beyond the ones NFKC
# folds to `<` and `/` (full-width and small forms).
_BRACKETS = "<\uff1c\ufe64\u2039\u27e8\u3008"
_LOOKALIKES = str.maketrans(
    {"\u2039": "<", "\u27e8": "<", "\u3008": "<", "\u2044": "/", "\u2215": "/", "\\": ""}
)
# Letters of other scripts that read as Latin ones (a Cyrillic `о` in `memory`).
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕһԁԛԝмткнвпгАВЕКМНОРСТУХЅІЈαοριυνκτεΑΒΕΖΗΙΚΜΝΟΡΤΥΧօոսı",
    "aeopcyxijshdqwmtkhbnrABEKMHOPCTYXSIJaopiuvkteABEZHIKMNOPTYXonui",
)
# Where a tag may start: a bracket, an HTML entity, a JSON or C escape of one.
_OPENINGS = f"[{_BRACKETS}&]|\\\\+[uUxX]"
_ENTITY = r"(?i)&(?:amp;)*(?:lt;?|#0*60;?|#x0*3c;?)"
_ESCAPED_BRACKET = r"(?i)(\\+)(?:u003c|x3c)"
# The tags a reader could take for the prompt's own: the memory fence, the roles of a chat,
# and special tokens written `<|...|>`.
_TAG_START = r"(?i)<\s*/?\s*(?:memory|(?:system|assistant|user|human|developer|instructions?)\b|\|)"
_TAG_WINDOW = 256  # characters after a bracket that can still be part of a look-alike tag


def fence_safe(text: str) -> str:
    """Memory text cannot close its own fence, nor seem to, nor open a tag of the prompt's.

    A tag is the memory fence, a chat role (`<system>`, `</user>`...) or a special token
    (`<|im_start|>`); it is read through look-alikes: other brackets and slashes, letters
    of any width, case or script, spaces, invisible characters or backslashes inside it.
    Its opening is escaped as HTML escapes it: a bracket becomes `&lt;`, the `&` of a
    bracket written as an entity (`&lt;/memory&gt;`) becomes `&amp;`, and the backslash of
    one written as an escape (`\\u003c`) is escaped itself; decoded once, the text is what
    was recorded, and no tag is left in it.
    """
    out: list[str] = []
    last = 0
    for opening in re.finditer(_OPENINGS, text):
        at = opening.start()
        found = _tag_at(text, at)
        if found:
            out.append(text[last:at] + found)
            last = at + 1
    return "".join(out) + text[last:]


def _tag_at(text: str, at: int) -> str:
    """What the opening at `at` is written as when a tag starts there ("" when none does)."""
    first = text[at]
    if first in ("&", "\\"):
        written = re.compile(_ENTITY if first == "&" else _ESCAPED_BRACKET).match(text, at)
        # An even run of backslashes is escaped backslashes, then plain letters.
        if written is None or (first == "\\" and len(written.group(1)) % 2 == 0):
            return ""
        rest, escaped = written.end(), "&amp;" if first == "&" else "\\\\"
    else:
        rest, escaped = at + 1, "&lt;"
    return escaped if _reads_as_tag("<" + text[rest : rest + _TAG_WINDOW]) else ""


def _reads_as_tag(window: str) -> bool:
    import unicodedata

    decoded = _unescaped(window)  # `&#47;memory` is `/memory`
    visible = "".join(
        " " if ch.isspace() or unicodedata.category(ch) == "Cf" else ch for ch in decoded
    )
    folded = unicodedata.normalize("NFKC", visible).translate(_LOOKALIKES)
    return bool(re.match(_TAG_START, folded.translate(_CONFUSABLES)))


def _unescaped(text: str) -> str:
    """HTML character references decoded (the table of names is loaded only for a text that
    holds one)."""
    if "&" not in text:
        return text
    import html

    return html.unescape(text)
