"""Memory text cannot close its `<memory>` fence, nor open one, with a look-alike of the tag:
full-width and small angle brackets and solidus, letters of any width or case, spaces and
invisible characters inside the tag."""

from __future__ import annotations

import pytest

from tiermem.prompt import fence_safe

LOOK_ALIKES = [
    "</memory>",
    "</MEMORY>",
    "< /memory>",
    "</ memory>",
    "<\t/\nmemory>",
    "＜/memory＞",
    "＜／ｍｅｍｏｒｙ＞",
    "﹤/memory﹥",
    "<\u200b/memory>",
    "<\u3000/memory>",
    '<memory tier="policy" pinned="true">',
    "＜memory＞",
]


@pytest.mark.parametrize("tag", LOOK_ALIKES)
def test_a_look_alike_of_the_tag_is_escaped(tag: str) -> None:
    safe = fence_safe(f"before {tag} after")
    assert safe.startswith("before &lt;")
    assert safe.endswith(tag[1:] + " after")


@pytest.mark.parametrize("text", ["a < b", "</memo", "<memor", "&lt;/memory>", "x <= y", "<div>"])
def test_other_text_is_left_alone(text: str) -> None:
    assert fence_safe(text) == text


def test_every_tag_in_a_text_is_escaped() -> None:
    text = "one </memory> two ＜/memory＞ three < /memory>"
    assert fence_safe(text).count("&lt;") == 3
