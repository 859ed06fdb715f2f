"""Wiki pages named as a person keeping a table of contents would: by the team's own domain
words, never by a generic word, an agent's or a person's name; the import and Scribe's later
promotions alike."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from page_names import assert_named_by_the_team
from tiermem.bench.shape import wiki_shape
from tiermem.cli.main import main
from tiermem.memory import Memory
from tiermem.storage.clock import format_time, parse_time
from tiermem.storage.entries import Entry
from tiermem.team.topics import Vocabulary

NOW = "2026-04-15T00:00:00Z"
TEAM_MD = """\
# Team

- **Owner:** Dana Whitfield

| Name | Role |
|------|------|
| Flight | Lead |
| Booster | CI |
"""

# Titles in the words teams really write: generic openers, names, kinds of notes.
DECISIONS = [
    ("Always run the smoke test before publish", "Flight", "The `smoke` job gates `npm publish`."),
    ("Key rotation for the npm token", "Dana Whitfield", "Rotate `NPM_TOKEN` every 90 days."),
    ("Important: latest release notes format", "Flight", "Release notes list every package."),
    ("General cleanup of misc notes", "Booster", "Notes older than a year go to the archive."),
    ("Flight owns the changelog", "Dana Whitfield", "The changelog is written by Flight."),
    ("Dana's rule on publish branches", "Dana", "Publish only from `main` or `release/*`."),
    ("Summary: other options for caching", "Booster", "The CI cache is keyed by the lockfile."),
    ("User directive", "Dana (via Copilot)", "Always use Zod for validating API input."),
    ("Update: merged the publish gate", "Booster", "The publish gate blocks on `smoke`."),
    ("Major version policy", "Flight", "A major version needs a migration guide in docs/."),
    ("Previous name of the CLI", "Flight", "The CLI was `squad-beta`; its name is `squad`."),
    ("Must pin the SDK in the CLI", "Flight", "The CLI pins `squad-sdk` to an exact version."),
]


def write_team(root: Path) -> Path:
    squad = root / ".squad"
    for agent in ("flight", "booster"):
        (squad / "agents" / agent).mkdir(parents=True)
        (squad / "agents" / agent / "history.md").write_text(
            f"# {agent.title()}\n\n## Core Context\n\nI work on the CLI.\n", encoding="utf-8"
        )
    (squad / "team.md").write_text(TEAM_MD, encoding="utf-8")
    blocks = [
        f"### 2026-03-{1 + n:02d}: {title}\n**By:** {by}\n**What:** {what}\n"
        for n, (title, by, what) in enumerate(DECISIONS)
    ]
    (squad / "decisions.md").write_text("# Decisions\n\n" + "\n".join(blocks), encoding="utf-8")
    return squad


def test_an_import_names_no_page_by_a_generic_word_an_agent_or_a_person(tmp_path: Path) -> None:
    write_team(tmp_path)
    assert main(["import", "squad", "--root", str(tmp_path), "--now", NOW]) == 0
    mem = Memory(tmp_path, now=NOW)
    shape = wiki_shape(mem)
    assert shape["unnamed_pages"] == shape["personal_pages"] == []
    assert_named_by_the_team(shape["page_names"], {"flight", "booster", "dana", "whitfield"})
    # Every decision reached a page, and pages are the team's subjects.
    assert sum(shape["wiki_classes"].values()) == len(DECISIONS)
    assert {"publish", "changelog"} <= set(shape["page_names"])
    mem.close()


def test_scribes_later_promotions_follow_the_same_rules(tmp_path: Path) -> None:
    write_team(tmp_path)
    mem, _ = Memory.init(tmp_path, now=NOW, squad_files=False)
    mem.hot_set("flight", "set the release rules")
    mem.hot_add(
        "flight",
        "note",
        "## Convention: always squash merges\nEvery pull request to `main` is squashed; the "
        "title follows conventional commits, checked by the `commitlint` job.\n\n"
        "## Key learnings\nThe changelog bot reads the squashed titles from `main` to write "
        "the release notes, so a bad title shows up there first.",
    )
    mem.end_session("flight")
    later = Memory(tmp_path, now=format_time(parse_time(NOW) + timedelta(days=8)))
    promoted = later.scribe_run().promoted
    pages = sorted(promoted)
    assert pages, "the convention reached the wiki"
    assert_named_by_the_team(pages, {"flight", "booster", "dana", "whitfield"})
    wiki = "".join(later.wiki_read(p) for p in pages)
    assert "squashed" in wiki
    assert "changelog bot" not in wiki  # learnings stay the agent's
    later.close()
    mem.close()


def entry(title: str, body: str = "", **extra: str) -> Entry:
    return Entry(
        f"d-{abs(hash(title)) % 10**10:010d}",
        "decision",
        title,
        body,
        agent="team",
        extra=tuple(extra.items()),
    )


def test_a_page_of_old_with_a_generic_name_takes_nothing_new() -> None:
    vocabulary = Vocabulary([entry("General release rules")], ["general", "release"])
    assert vocabulary.topic(entry("General release rules")) == "release"


def test_an_identifier_of_one_entry_alone_names_its_page_by_its_words() -> None:
    batch = [
        entry(
            "Decision: Introduce IMessageTemplateManager Caching Layer",
            "Caching of message templates; the template cache is warmed at start-up.",
        )
    ]
    vocabulary = Vocabulary(batch, [])
    assert vocabulary.topic(batch[0]) in ("template", "message", "caching", "cache")


def test_the_parts_of_one_long_entry_vote_once() -> None:
    parts = [
        entry(f"Parser frame layout ({n}/12)", "frames", parent="d-0000000001") for n in range(12)
    ]
    others = [entry("Release branch naming"), entry("Release notes format")]
    vocabulary = Vocabulary([*parts, *others], [])
    assert vocabulary.topic(parts[0]) == "parser"


def test_forms_of_one_subject_go_on_one_page() -> None:
    batch = [
        entry("Publishing gate for npm releases", "The smoke job gates `npm publish`."),
        entry("Publish tokens rotate monthly", "`NPM_TOKEN` rotates on the first."),
        entry("Reconnection backoff for the client", "The client waits 2s, then 4s."),
        entry("Reconnect after a server restart", "Sessions survive a restart."),
    ]
    vocabulary = Vocabulary(batch, [])
    assert vocabulary.topic(batch[0]) == vocabulary.topic(batch[1])
    assert vocabulary.topic(batch[2]) == vocabulary.topic(batch[3])
    # A page of old in one form takes the other form's entries.
    later = Vocabulary([entry("Publishing checklist", "Run the smoke job first.")], ["publish"])
    assert later.topic(entry("Publishing checklist", "Run the smoke job first.")) == "publish"


def test_a_word_of_the_team_tool_names_no_page() -> None:
    batch = [entry(f"Decision Inbox — {subject}", "Merged.") for subject in ("TLDR", "Hono")]
    vocabulary = Vocabulary(batch, ["inbox"], skip={"inbox", "config", "squad"})
    assert {vocabulary.topic(e) for e in batch} == {"tldr", "hono"}
