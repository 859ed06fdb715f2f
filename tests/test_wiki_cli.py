"""`tiermem wiki write / show`: an entry is written once under its topic with the class its
words give it, said in one line; the same text asked twice is one entry; a topic or author that
cannot be taken is refused in one line with the name meant, and nothing is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import RunCli
from reliability import snapshot

T1 = "2026-03-03T10:00:00Z"
WRITTEN = re.compile(r"wiki: (w-[0-9a-f]{10}) written to \.squad/memory/wiki/(\S+)\.md \((\w+)\)\n")


def write(
    run_cli: RunCli, root: Path, topic: str, text: str, *options: str
) -> tuple[str, str, str]:
    """(id, page, class) of an entry written, its text given on stdin."""
    args = ("wiki", "write", topic, "-", *options, "--root", str(root), "--now", T1)
    code, out, err = run_cli(*args, stdin=text.encode())
    assert (code, err) == (0, ""), err
    match = WRITTEN.fullmatch(out)
    assert match is not None, out
    entry_id, page, cls = match.groups()
    return entry_id, page, cls


def ids_on(root: Path, topic: str) -> list[str]:
    page = root / ".squad" / "memory" / "wiki" / f"{topic}.md"
    return re.findall(r"<!-- tiermem id=(\S+)", page.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("text", "cls"),
    [
        ("# Pin the runner\nThe CI runner image is pinned to ubuntu-24.04.\n", "convention"),
        ("Always run the suite before merging\n", "policy"),
        ("Never push to main directly\nEvery change goes through review.\n", "policy"),
    ],
)
def test_an_entry_is_written_under_its_topic_with_the_class_its_words_give(
    store_copy: Path, run_cli: RunCli, text: str, cls: str
) -> None:
    entry_id, page, said = write(run_cli, store_copy, "testing", text, "--by", "flight")
    assert (page, said) == ("testing", cls)
    assert ids_on(store_copy, "testing") == [entry_id]
    code, out, _ = run_cli("wiki", "show", "testing", "--root", str(store_copy))
    assert code == 0 and f"tiermem id={entry_id} class={cls} " in out


def test_the_same_text_asked_twice_is_one_entry(store_copy: Path, run_cli: RunCli) -> None:
    text = "Always run the suite before merging\n"
    first = write(run_cli, store_copy, "testing", text, "--by", "flight")
    page = (store_copy / ".squad" / "memory" / "wiki" / "testing.md").read_bytes()
    again = write(run_cli, store_copy, "testing", text, "--by", "flight")
    assert again == first
    assert ids_on(store_copy, "testing") == [first[0]]
    assert (store_copy / ".squad" / "memory" / "wiki" / "testing.md").read_bytes() == page


def test_entries_on_a_topic_accumulate_in_the_order_written(
    store_copy: Path, run_cli: RunCli
) -> None:
    made = [
        write(run_cli, store_copy, "testing", f"# Rule {n}\nThe suite runs step {n}.\n")[0]
        for n in range(3)
    ]
    assert ids_on(store_copy, "testing") == made


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("write", "Bad Topic", "x"), "did you mean 'bad-topic'?"),
        (("write", "testing", "x", "--by", "flite"), "did you mean 'flight'?"),
        (("write", "testing", "   "), "text is empty"),
        (("show", "relase"), "no wiki page 'relase' (pages: release)"),
        (("show", "../hot/flight"), "topic name"),
    ],
    ids=["bad topic", "author typo", "blank text", "unknown page", "a path"],
)
def test_what_cannot_be_taken_is_refused_in_one_line(
    store_copy: Path, run_cli: RunCli, args: tuple[str, ...], said: str
) -> None:
    before = snapshot(store_copy)
    code, out, err = run_cli("wiki", *args, "--root", str(store_copy), "--now", T1)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err
    assert snapshot(store_copy) == before


def test_a_new_author_said_to_be_new_may_write(store_copy: Path, run_cli: RunCli) -> None:
    entry_id, page, _ = write(
        run_cli,
        store_copy,
        "testing",
        "# Lint\nRuff runs first.\n",
        "--by",
        "newbie",
        "--new-agent",
    )
    assert page == "testing" and ids_on(store_copy, "testing") == [entry_id]
    text = (store_copy / ".squad" / "memory" / "wiki" / "testing.md").read_text("utf-8")
    assert "agent=newbie " in text
