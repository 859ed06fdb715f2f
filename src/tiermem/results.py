"""What the API returns: one dataclass per result, with one JSON shape for every caller.

The CLI prints `result.to_json()` for `--format json`; the MCP server answers with the same
JSON and derives its output schemas from these classes. A field's JSON name is its own,
except where metadata says otherwise (`cls` is written `class`); a field's `doc` metadata
is its description for programs.

Results are dataclasses with slots: their fields are all they hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass

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


# --- hot ---------------------------------------------------------------------------------


@dataclass(slots=True)
class HotEntry(Result):
    """One entry of a hot tier."""

    id: str
    slot: str = field(metadata=about("task, why, talking-to, decision, blocker, action or note."))
    cls: str = field(metadata=about("The entry's class, e.g. decision or status.", json="class"))
    created: str = ""
    title: str = ""
    body: str = ""
    trust: str = field(default="", metadata=about("'untrusted' for text from tools or the web."))

    @property
    def text(self) -> str:
        """Title and body as one text, as the index holds it."""
        return f"{self.title}\n{self.body}" if self.body else self.title


@dataclass(slots=True)
class HotView(Result):
    """An agent's hot tier: the current session."""

    agent: str
    session: str = field(metadata=about("Session id; empty when the agent has no hot tier yet."))
    bytes: int = field(
        metadata=about("Bytes of its text as a spawn loads it, which its budget bounds.")
    )
    markdown: str = field(metadata=about("The hot tier as it is loaded into a spawn prompt."))
    entries: tuple[HotEntry, ...] = ()
    started: str = field(
        default="", metadata=about("When the current session started: the hot tier's as-of.")
    )
    hint: str = field(
        default="",
        metadata=about("How to clear blockers carried from earlier sessions ('' for none)."),
    )


@dataclass(slots=True)
class WriteReport(Result):
    """What a write did, in words for the user and ids for programs."""

    agent: str
    ids: list[str] = field(default_factory=list, metadata=about("Ids of the entries written."))
    messages: list[str] = field(default_factory=list, metadata=about("What happened, in words."))
    archived: list[str] = field(
        default_factory=list, metadata=about("Archive records that older text moved into.")
    )
    cold: list[str] = field(
        default_factory=list, metadata=about("Cold entries Scribe wrote to keep hot within budget.")
    )
    redactions: list[str] = field(
        default_factory=list, metadata=about("Kinds of credential-shaped text replaced.")
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)
    change: str = field(
        default="",
        metadata=about("What was written: set, the slot of an entry added, unblock or clear."),
    )
    bytes: int = field(default=0, metadata=about("Size of the hot file after the write."))
    budget: int = field(default=0, metadata=about("The hot budget, in bytes."))
    overflow: int = field(
        default=0, metadata=about("Bytes moved out of hot to keep it within its budget.")
    )
    left: int = field(
        default=0,
        metadata=about("Items that left hot: replaced, past the action limit, or cleared."),
    )

    def lines(self) -> list[str]:
        """What happened, in words (`messages`)."""
        if self.change == "clear":
            queued = f"{self.left} item(s) archived and queued for Scribe"
            return [f"hot: {self.agent} cleared; {queued}"]
        said = [f"hot: {self.agent} {self.change} saved ({self.bytes} bytes)"]
        if self.overflow:
            said.append(
                f"hot budget {self.budget} bytes: {self.overflow} bytes moved out; raw "
                f"text archived in {self.archived[-1]}; Scribe checkpointed it to cold "
                f"({', '.join(self.cold) or 'queued'})"
            )
        elif self.left:
            said.append(
                f"{self.left} older item(s) left hot; archived in {self.archived[-1]} and "
                "queued for the session summary"
            )
        return said


@dataclass(slots=True)
class AgentInfo(Result):
    """An agent of the team: whether Squad lists it, and where it has memory."""

    name: str
    squad: bool = field(metadata=about("Whether Squad has a folder for it (.squad/agents/)."))
    memory: list[str] = field(
        default_factory=list, metadata=about("The tiers holding its memory: hot, cold, ...")
    )


# --- reading -----------------------------------------------------------------------------


@dataclass(slots=True)
class SearchHit(Result):
    """One search result: an entry or a section of an archived text, whole when short (or
    read by its id), else the passages that match the query (`spans` says where)."""

    id: str = field(metadata=about("Entry or archive record id; searching an id reads its entry."))
    tier: str
    agent: str
    path: str = field(metadata=about("The file it lives in, relative to the repository."))
    title: str
    text: str
    score: float = field(
        metadata=about("Relevance; higher is better (0 for an entry read by its id).")
    )
    cls: str = field(
        default="", metadata=about("The entry's class (empty for archived text).", json="class")
    )
    created: str = field(
        default="", metadata=about("When the entry or the archived text was made.")
    )
    tokens: int = field(default=0, metadata=about("Tokens of the text shown (o200k_base)."))
    session: str = field(default="", metadata=about("The session the entry came from, if any."))
    sources: tuple[str, ...] = field(
        default=(),
        metadata=about("Archive records holding the text it was made from (`#L12`: a line)."),
    )
    origin: str = field(
        default="", metadata=about("Where it came from, in words (from its first source).")
    )
    spans: tuple[tuple[int, int], ...] = field(
        default=(),
        metadata=about(
            "Where the passages shown sit in the whole text (character offsets, start and end); "
            "empty when the text is shown whole. `search ID` reads it whole."
        ),
    )
    trust: str = field(
        default="",
        metadata=about("'untrusted' for text from tools or the web, or an archive holding some."),
    )


@dataclass(slots=True)
class EntryText(Result):
    """Any id a search returns, read: a tier entry, an archived record, or a section of one."""

    id: str
    tier: str
    agent: str
    path: str = field(metadata=about("The file it lives in, relative to the repository."))
    title: str
    text: str = field(
        metadata=about(
            "Its text (archived text byte for byte as archived; an entry's title, which "
            "starts its text, as `title` shows it)."
        )
    )
    cls: str = field(
        default="", metadata=about("The entry's class (empty for archived text).", json="class")
    )
    created: str = ""
    source: str = field(default="", metadata=about("What an archived text came from."))
    offset: int = field(default=0, metadata=about("Where this text starts, in characters."))
    total_chars: int = field(default=0, metadata=about("Characters of the whole text."))
    next_offset: int | None = field(
        default=None, metadata=about("Where the rest starts, when the text was cut; else null.")
    )
    trust: str = field(
        default="",
        metadata=about("'untrusted' for text from tools or the web, or an archive holding some."),
    )


@dataclass(slots=True)
class Page(Result):
    """A wiki topic and how much it holds."""

    topic: str
    entries: int
    active: int = field(metadata=about("Entries neither superseded nor expired."))
    bytes: int


@dataclass(slots=True)
class WikiEntry(Result):
    """The wiki entry a request produced."""

    id: str
    topic: str
    cls: str = field(metadata=about("policy, decision, convention or contract.", json="class"))
    title: str
    path: str = field(metadata=about("The page file, relative to the repository."))


@dataclass(slots=True)
class TierRow(Result):
    """Entries, bytes and tokens of one agent in one tier."""

    agent: str
    tier: str
    entries: int
    bytes: int
    tokens: int


@dataclass(slots=True)
class Totals(Result):
    """Entries, bytes and tokens of one tier, all agents together."""

    entries: int
    bytes: int
    tokens: int


@dataclass(slots=True)
class SquadLoad(Result):
    """What a Squad spawn of one agent loads today: its history.md and decisions.md."""

    agent: str
    bytes: int
    tokens: int


@dataclass(slots=True)
class Stats(Result):
    """What each agent's memory holds, against what a Squad spawn loads today."""

    tiers: list[TierRow]
    totals: dict[str, Totals]
    squad_spawn: list[SquadLoad]


# --- Scribe ------------------------------------------------------------------------------


@dataclass(slots=True)
class SessionReport(Result):
    """What ending one agent's session produced."""

    agent: str
    cold: list[str] = field(default_factory=list, metadata=about("The dated cold entries written."))
    knowledge: list[str] = field(
        default_factory=list, metadata=about("Structured entries (policy, convention...) kept.")
    )
    decisions: list[str] = field(default_factory=list, metadata=about("Decisions recorded."))
    archived: list[str] = field(
        default_factory=list, metadata=about("Archive records holding the raw session text.")
    )
    carried: list[str] = field(
        default_factory=list, metadata=about("Blockers carried into the next session's hot.")
    )
    raw_bytes: int = 0
    summary_bytes: int = field(
        default=0, metadata=about("Bytes of the summary under the cold entry's heading.")
    )
    summarizer: str = field(
        default="extractive", metadata=about("What wrote the summary (a model only if called).")
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)


@dataclass(slots=True)
class RunReport(Result):
    """What a maintenance run did (or, dry, would do)."""

    dry_run: bool
    checkpoints: list[str] = field(default_factory=list)
    inbox_merged: list[str] = field(
        default_factory=list,
        metadata=about("Squad's inbox files merged into its decision log, then deleted."),
    )
    inbox_lines: int = field(
        default=0, metadata=about("Lines the inbox merge added to Squad's decision log.")
    )
    inbox_skipped: list[str] = field(default_factory=list)
    followed: list[str] | None = field(
        default=None,
        metadata=about(
            "Squad's files imported again since the last import (None: the store never "
            "imported the team's files, so follows none)."
        ),
    )
    follow_written: int = field(default=0, metadata=about("Entries the files followed brought in."))
    follow_replaced: list[str] = field(
        default_factory=list,
        metadata=about("Entries of sections that grew since, replaced (their text archived)."),
    )
    superseded: list[tuple[str, str]] = field(default_factory=list)
    promoted: dict[str, list[str]] = field(default_factory=dict)
    expired: list[str] = field(default_factory=list)
    over_budget: list[str] = field(default_factory=list)
    refreshed: list[str] = field(
        default_factory=list,
        metadata=about(
            "Entries whose last use, recorded in this clone, was folded into the team's use "
            "ledger (.squad/memory/last-use.txt)."
        ),
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)
    skipped: list[str] = field(
        default_factory=list,
        metadata=about("What was left alone because a file it needs cannot be read, and why."),
    )

    def lines(self) -> list[str]:
        """The report in words."""
        verb = "would " if self.dry_run else ""
        moved = sum(len(v) for v in self.promoted.values())
        out = [
            self._inbox(verb),
            *self._follow(verb),
            f"checkpoints: {verb}compress {count(len(self.checkpoints), 'queued agent')}",
            f"supersede: {verb}mark {count(len(self.superseded), 'older entry')} superseded",
            f"promote: {verb}move {count(moved, 'entry')} to "
            f"{count(len(self.promoted), 'wiki page')}",
            f"expire: {verb}archive {count(len(self.expired), 'cold entry')} unused for the TTL",
            f"cold budget: {verb}archive {count(len(self.over_budget), 'oldest entry')} over "
            "budget",
            f"use: {verb}fold this clone's recorded use of {count(len(self.refreshed), 'entry')} "
            "into .squad/memory/last-use.txt",
        ]
        return out  # skipped inbox files are said on stderr, as every command says them

    def _follow(self, verb: str) -> list[str]:
        """What came in from Squad's files since the last import (nothing to say for a store
        that never imported them)."""
        if self.followed is None:
            return []
        changed = count(len(self.followed), "Squad file")
        files = f"{verb}import {changed} changed since the last import"
        if self.dry_run or not self.followed:
            return [f"follow: {files}"]
        replaced = count(len(self.follow_replaced), "entry")
        return [
            f"follow: {files}: {count(self.follow_written, 'entry')} written, "
            f"{replaced} of sections that grew replaced (their text archived)"
        ]

    def _inbox(self, verb: str) -> str:
        """What the run did to Squad's own files: the inbox merged into its decision log."""
        merged = f"{verb}merge {count(len(self.inbox_merged), 'file')} into .squad/decisions.md"
        if not self.inbox_merged:
            return f"inbox: {merged}"
        lines = count(self.inbox_lines, "line")
        added = f"adding {lines}" if verb else f"{lines} added"
        delete = "delete" if verb else "deleted"
        return (
            f"inbox: {merged} ({added}) and {delete} them from .squad/decisions/inbox/: "
            + ", ".join(self.inbox_merged)
        )


@dataclass(slots=True)
class ForgetReport(Result):
    """What forgetting an entry did: the tiers it left, where its text is kept (or purged)."""

    id: str = field(metadata=about("The id asked for."))
    ids: list[str] = field(
        default_factory=list, metadata=about("Entries retired: the entry, or all its parts.")
    )
    purged: bool = field(default=False, metadata=about("Whether the text was deleted too."))
    files: list[str] = field(default_factory=list, metadata=about("Tier files it left."))
    archived: str = field(
        default="", metadata=about("The archive record keeping its text (not after a purge).")
    )
    records: list[str] = field(
        default_factory=list, metadata=about("Archive records rewritten without the text.")
    )
    tombstone: str = field(
        default="", metadata=about("The record saying what was purged, when and why.")
    )
    still_in: list[str] = field(
        default_factory=list, metadata=about("Other entries still holding some of the text.")
    )
    elsewhere: list[str] = field(
        default_factory=list,
        metadata=about("Squad's own files (outside the store) holding some of the text."),
    )
    messages: list[str] = field(default_factory=list, metadata=about("What happened, in words."))

    def lines(self) -> list[str]:
        """What happened, in words (`messages`)."""
        kept = [f"its text is kept in {self.archived}"] if self.archived else []
        if not self.purged and not self.files:  # a passage of archived text
            return [f"retired {self.id} from search and spawns: {', '.join(self.ids)}", *kept]
        if not self.purged:
            return [f"forgot {self.id}: {', '.join(self.ids)} left {', '.join(self.files)}", *kept]
        left = f" left {', '.join(self.files)}" if self.files else ""
        said = [
            f"purged {self.id}: {', '.join(self.ids)}{left}",
            *kept,
            f"archive records rewritten: {', '.join(self.records) or 'none'}",
            f"tombstone: {self.tombstone}",
        ]
        if self.still_in:
            said.append(f"still holding some of the text: {', '.join(self.still_in)}")
        if self.elsewhere:
            said.append(f"Squad's files holding some of the text: {', '.join(self.elsewhere)}")
        return said


@dataclass(slots=True)
class Finding(Result):
    """One thing `tiermem doctor` found in a store, and what it did about it."""

    kind: str = field(
        metadata=about(
            "link, store, name, temp, file, ids, malformed, sessions, archive, citation, index, "
            "queue: what it is about"
        )
    )
    path: str = field(metadata=about("The file or folder, relative to the root."))
    problem: str = field(metadata=about("What is wrong (or, for a note, what is going on)."))
    serious: bool = field(
        default=True, metadata=about("A problem (true), or a note about a store that is fine.")
    )
    repaired: str = field(default="", metadata=about("What the repair did; empty if nothing."))


@dataclass(slots=True)
class DoctorReport(Result):
    """What `tiermem doctor` checked, found and (with --repair) repaired."""

    repair: bool
    checked: dict[str, int] = field(
        default_factory=dict, metadata=about("How many of each thing were looked at.")
    )
    findings: list[Finding] = field(default_factory=list)

    @property
    def problems(self) -> list[Finding]:
        """The problems that remain (not notes, not repaired)."""
        return [f for f in self.findings if f.serious and not f.repaired]

    def lines(self) -> list[str]:
        """The report in words, one line per finding."""
        checked = ", ".join(f"{n} {what}" for what, n in sorted(self.checked.items()))
        out = [f"doctor: checked {checked or 'the store'}"]
        for f in self.findings:
            label = "repaired" if f.repaired else "problem" if f.serious else "note"
            out.append(
                f"{label}: {f.path}: {f.problem}" + (f"; {f.repaired}" if f.repaired else "")
            )
        left = len(self.problems)
        out.append(f"doctor: {left} problem(s) left" if left else "doctor: no problems left")
        return out


# --- spawn -------------------------------------------------------------------------------


@dataclass(slots=True)
class Loaded(Result):
    """An entry a spawn loaded."""

    tier: str
    id: str
    path: str


@dataclass(slots=True)
class SpawnResult(Result):
    """The rendered prompt and what went into it."""

    agent: str
    situation: str = field(metadata=about("Why these tiers: the situation the task was read as."))
    reason: str
    tiers: list[str]
    prompt: str = field(metadata=about("The prompt to start the agent with."))
    tokens: dict[str, int] = field(metadata=about("Tokens per section and in total."))
    baseline_tokens: int | None = field(
        metadata=about(
            "Tokens of the agent's history.md plus decisions.md: what a Squad spawn loads today."
        )
    )
    sources: list[Loaded] = field(
        default_factory=list, metadata=about("Entries loaded: tier, id and path.")
    )
    left_out: list[str] = field(
        default_factory=list,
        metadata=about("Relevant entries the prompt shows nothing of: memory's room was spent."),
    )
    stale: dict[str, list[str]] = field(
        default_factory=dict,
        metadata=about("Loaded entries citing repository paths git no longer tracks, by id."),
    )
    memory_room: int = field(
        default=0,
        metadata=about(
            "Tokens memory's passages may take: the budget's fill share less the prompt's frame."
        ),
    )
    notes: list[str] = field(default_factory=list, metadata=NOTES)


@dataclass(slots=True)
class SpawnRecord(Result):
    """One spawn as this clone's spawn log keeps it (`.squad/memory/spawns.jsonl`)."""

    time: str
    agent: str
    task: str = field(metadata=about("The task, as given (credentials redacted)."))
    situation: str
    entries: list[str] = field(
        default_factory=list, metadata=about("Ids of the entries the prompt loaded.")
    )
    left_out: list[str] = field(
        default_factory=list, metadata=about("Relevant entries that did not fit the budget.")
    )
    tokens: dict[str, int] = field(
        default_factory=dict, metadata=about("Tokens per section and in total.")
    )
    stale: dict[str, list[str]] = field(
        default_factory=dict,
        metadata=about("Loaded entries citing repository paths git no longer tracks."),
    )


@dataclass(slots=True)
class SpawnLog(Result):
    """Spawns from this clone's log, newest first: what each got, or which got an entry."""

    spawns: list[SpawnRecord]
    agent: str = field(default="", metadata=about("Only spawns of this agent (empty: all)."))
    entry: str = field(
        default="", metadata=about("Only spawns that loaded this entry or a part of it.")
    )
    skipped: list[str] = field(
        default_factory=list,
        metadata=about("Lines of the log left out, as FILE:LINE: why (torn, damaged)."),
    )


# --- report ------------------------------------------------------------------------------


@dataclass(slots=True)
class ReportResult(Result):
    """The report page written, and what it holds."""

    path: str = field(metadata=about("The HTML file: one page, no server or network needed."))
    bytes: int
    entries: int = field(metadata=about("Entries of hot, cold and the wiki (parts joined)."))
    records: int = field(metadata=about("Archive records."))
    agents: int
    stale: int = field(metadata=about("Entries citing repository paths git no longer tracks."))
    superseded: int
    preview: bool = field(metadata=about("Whether the page holds a spawn preview (--task)."))
    local: bool = field(
        default=False,
        metadata=about("Whether the page is in the default folder: this clone's, git-ignored."),
    )


# --- import ------------------------------------------------------------------------------


@dataclass(slots=True)
class SectionPlacement(Result):
    """Where one section of a Squad file goes when it is imported (a row of the dry run)."""

    file: str = field(metadata=about("The Squad file, from the repository's root."))
    line: int = field(metadata=about("The line the section starts on."))
    section: str = field(metadata=about("The section's title (its kind when it has none)."))
    kind: str = field(
        metadata=about(
            "What it is: standing (an agent's Core Context), session, a decision's class "
            "(decision, policy, convention, contract), archived decision, session log, skill "
            "or text."
        )
    )
    agent: str = field(metadata=about("Whose it is: the agent, or team."))
    record: str = field(metadata=about("The archive record that holds its raw text."))
    entries: tuple[str, ...] = field(
        default=(), metadata=about("The entries made from it (none: the archive alone).")
    )
    tier: str = field(default="", metadata=about("Where it lands: cold, wiki or archive."))
    page: str = field(
        default="",
        metadata=about("Its file under .squad/memory/: cold/AGENT.md, wiki/TOPIC.md, a record."),
    )
    note: str = field(default="", metadata=about("What Scribe's pass did to it, if anything."))


@dataclass(slots=True)
class ImportReport(Result):
    """What an import read and wrote, and what each tier holds after Scribe's pass."""

    dry_run: bool
    files: int = field(metadata=about("Squad files read."))
    unchanged_files: int = field(metadata=about("Files whose exact content was imported before."))
    skipped: list[str] = field(
        metadata=about("Files that could not be read, with the line and why.")
    )
    entries_written: int
    classes: dict[str, dict[str, int]] = field(
        metadata=about("Entries per class and the tier they landed in.")
    )
    before: Totals = field(
        metadata=about("The Squad files read: bytes and tokens (entries: files).")
    )
    after: dict[str, Totals] = field(
        metadata=about("Entries, bytes and tokens per tier after the import.")
    )
    notes: list[str] = field(
        default_factory=list,
        metadata=about("Files imported with U+FFFD for bytes that are not UTF-8 (the line)."),
    )
    redacted: list[str] = field(
        default_factory=list,
        metadata=about(
            "Each credential replaced on the way to the archive, as `file:line: kind` "
            "(the kind names the family; the value is never said)."
        ),
    )
    sections: list[SectionPlacement] = field(
        default_factory=list,
        metadata=about("A dry run's rows: every section of every file read, and where it goes."),
    )
