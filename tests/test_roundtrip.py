"""A tier file tiermem accepts stays one it accepts after tiermem rewrites it: parse, render
and parse again give the same entries and notes, and rendering is then a fixed point.

Two shapes once broke this. A heading line that the file's metadata line separated from a
metadata-like note line became, once the metadata moved up on rendering, the start of an
entry whose metadata tiermem refuses (or, if it parsed, a new entry). And a lone carriage
return in a note came back as a line end."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiermem.errors import ParseError
from tiermem.storage.entries import parse, render

_lines = st.one_of(
    st.sampled_from(
        [
            "",
            "# memory",
            "# h",
            "## title",
            "## ",
            "### another",
            "<!-- tiermem id=a class=learning -->",
            "<!-- tiermem id=a class=decision used=2026-01-01T00:00:00Z -->",
            "<!-- tiermem id=b -->",
            "<!-- tiermem class=nonsense -->",
            "<!-- tiermem status=bogus -->",
            "<!-- tiermem created=yesterday -->",
            "<!-- tiermem id=a",
            "<!-- tiermem novalue -->",
            "<!-- tiermem tags=%ZZ,%C3 -->",
            "<!-- tiermem-file tier=hot -->",
            "<!-- tiermem-file  -->",
            "<!-- tiermem-file a=%0A -->",
            "\\<!-- tiermem id=c -->",
            "\\\\<!-- tiermem twice",
            "\r",
            "line\r",
            "a\rb",
            " ",
            "body text",
        ]
    ),
    st.text(string.printable, max_size=30),
)


def _round_trip(text: str) -> None:
    try:
        first = parse(text, "x.md")
    except ParseError:
        return  # refused from the start: never rewritten
    written = render(first)
    again = parse(written, "x.md")  # no ParseError: what was accepted stays accepted
    assert again.entries == first.entries
    assert again.notes == first.notes
    assert again.meta == first.meta
    assert render(again) == written


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_lines, max_size=14), st.sampled_from(["\n", "\r\n"]))
def test_what_is_accepted_is_accepted_again_after_a_rewrite(lines: list[str], nl: str) -> None:
    _round_trip(nl.join(lines))


@pytest.mark.parametrize(
    "text",
    [
        # a heading, the file's metadata, then a note shaped like metadata
        "## t\n<!-- tiermem-file a=%0A -->\n<!-- tiermem =x -->\n",
        "## x\n<!-- tiermem-file  -->\n<!-- tiermem id=b -->\n",
        # a lone carriage return in a note
        "## x\r\r\n# h\r\n<!-- tiermem-file  -->\r\nnote\rmore\r\n",
        # a note that repeats the heading
        "\n# memory",
        "x\n# memory\n",
    ],
)
def test_the_shapes_that_once_broke_round_trip(text: str) -> None:
    _round_trip(text)
