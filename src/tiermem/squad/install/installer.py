"""`tiermem squad install`: wire tiermem into a Squad team, report what is in place, take it out.

An install registers `tiermem serve` in `.mcp.json` (and `.vscode/mcp.json` where `.vscode/`
exists), creates the tiermem store, appends a marked memory section to every charter, puts
the runtime `tiered-memory` skill in place of Squad's design-only one and, with
`coordinator`, replaces every instruction of Squad's that loads an agent's whole history or
decision log at or before a spawn: the spawn template's two lines, and each such line of the
coordinator's prompt, Squad's templates and the charters (`sealed_lines`). What it put in is
marked in place and listed in `.squad/memory/tiermem-install.json`, so `uninstall` takes out
exactly that and puts back the bytes Squad wrote. A seal anyone can compute: uninstall acts
only on what the record lists, and with no record it changes nothing.

Everything is planned before anything is written: a refusal (a symbolic link, a file that
is not JSON, a state backend other than local, an install record tiermem did not write as
it writes them) leaves the repository untouched. The plan is then made again, and applied,
holding the store's lock alone, so that no writer (an editor's MCP server) writes into a
store an uninstall is taking away. The record is written first and removed last, each file
is replaced from a temp file kept in the store's git-ignored folder, and so a run killed at
any point leaves nothing `git add -A` would take beside the team's files, and the next run
finishes it. A cloned repository is untrusted input, so no path is read or written through a
link, nor outside the root, and what uninstall puts back comes from tiermem or from Squad's
own files, never from the record alone (`install_record`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from ...errors import StoreError, UsageError
from ...storage import bootstrap, clone, files, local_state, validate
from ...storage.layout import LOCAL_FOLDER, Layout, discover_root
from ...team.use import LEDGER_NAME
from ..adapter import team_state
from . import install_texts, sealed_lines, sealed_sections
from .install_paths import (
    COORDINATOR,
    COPILOT_INSTRUCTIONS,
    COPILOT_MCP,
    MANIFEST,
    MCP_JSON,
    SKILLS,
    SPAWN_TEMPLATE,
    SQUAD_SKILL_COPY,
    SQUAD_SKILL_FOLDERS,
    STORE,
    STORE_DIRS,
    STORE_FILES,
    STRAY_TEMPLATES,
    TEAM_SKILL_FOLDER,
    TEMPLATES,
    VSCODE_MCP,
)
from .install_record import Record, is_released_skill, is_squads_skill
from .install_steps import Report, Step, install_state, install_step
from .mcp_config import NOT_RECORDED, plan_mcp, unplan_mcp
from .repo_paths import Repo

# Derived, transient or local files of a store (the index, temp files, this clone's spawn
# log and list of tracked files): an unused store may hold them.
_TRANSIENT = re.compile(r"index\.sqlite(-\w+)?|\.tmp-.*|spawns\.jsonl|citations\.cache")
# This clone's own files: its use of entries, its report (and an earlier tiermem's in
# Squad's `local/`, by name).
_LOCAL = (
    f"{LOCAL_FOLDER}/used",
    f"{LOCAL_FOLDER}/report/report.html",
    f"{LOCAL_FOLDER}/report/.gitignore",
    f"{LOCAL_FOLDER}/imported",
    "local/used",
    "local/report/report.html",
    "local/report/.gitignore",
)
# Where a killed install, uninstall or write leaves temp files that the next run removes.
_TEMP_FOLDERS = (".squad/memory", *(f".squad/memory/{name}" for name in STORE_DIRS))

# --- the repository as Squad left it ----------------------------------------------------


def open_repo(explicit: str | Path | None) -> Repo:
    """The repository of a Squad team: --root, TIERMEM_ROOT, else the nearest `.squad/`."""
    try:
        repo = Repo(discover_root(explicit))
    except StoreError:
        raise UsageError(
            "no .squad/ folder here or above: run `squad init` first, or pass --root"
        ) from None
    if not repo.is_dir(".squad/agents"):
        raise UsageError(f"no Squad team in {repo.root}: .squad/agents/ is missing")
    return repo


def refuse_remote_state(repo: Repo) -> list[Step]:
    """Refuse a team whose Squad state is not kept in this working tree's `.squad/`
    (`team_state`); the steps that say how a `teamRoot` was read, when it needed saying."""
    state = team_state.of_config(repo.text(team_state.CONFIG), repo.root)
    if not state.note:
        return []
    return [Step(team_state.CONFIG, "teamRoot", "left", note=state.note)]


# --- charters ---------------------------------------------------------------------------


def _memory_text(agent: str, scribe: bool) -> Callable[[str, str], str]:
    """What tiermem writes in a charter's memory section now (`sealed_sections.sections`)."""
    return lambda variant, indent: install_texts.agent_memory_body(agent, scribe)


def memory_sections(text: str, agent: str, scribe: bool) -> list[sealed_sections.Section]:
    """The memory sections of a charter, tiermem's and look-alikes."""
    return sealed_sections.sections(text, install_texts.MEMORY, _memory_text(agent, scribe))


def _lead(text: str, section: sealed_sections.Section) -> str:
    """What the install set before a memory section, where it is still as the install set
    it: a blank line, and the charter's own last newline when it had none (a section at the
    end of a charter that lacked it). A line someone typed in place of the blank line keeps
    the newline that ends it."""
    before = text[: section.start]
    at_end = section.end == len(text)
    no_eol = section.variant == install_texts.NO_EOL and at_end
    if no_eol and len(before) > 2 and before.endswith("\n\n") and before[-3] != "\n":
        return "\n\n"
    return "\n" if before.endswith("\n\n") else ""


def without_memory_block(text: str, agent: str, scribe: bool) -> str:
    """A charter without tiermem's own memory sections (and the blank line set before each);
    a look-alike or an edited section stays."""
    for section in reversed(memory_sections(text, agent, scribe)):
        if section.ours:
            text = sealed_sections.without(text, section, _lead(text, section))
    return text


def with_memory_block(text: str, agent: str, scribe: bool) -> str:
    """A charter with tiermem's section brought up to date where it stands, else added at
    its end after one blank line."""
    ours = [s for s in memory_sections(text, agent, scribe) if s.ours]
    if ours:
        for section in reversed(ours[1:]):
            text = sealed_sections.without(text, section, _lead(text, section))
        fresh = install_texts.agent_memory_block(agent, scribe, ours[0].variant)
        return sealed_sections.replaced(text, ours[0], fresh)
    if not text:
        return install_texts.agent_memory_block(agent, scribe)
    if text.endswith("\n"):
        return f"{text}\n{install_texts.agent_memory_block(agent, scribe)}"
    return f"{text}\n\n{install_texts.agent_memory_block(agent, scribe, install_texts.NO_EOL)}"


def charters(repo: Repo) -> list[tuple[str, str]]:
    """(folder name, charter path) of every agent under `.squad/agents/` with a charter."""
    found = []
    with os.scandir(repo.path(".squad/agents")) as listing:
        for item in sorted(listing, key=lambda e: e.name):
            rel = f".squad/agents/{item.name}/charter.md"
            if item.is_symlink() or (
                item.is_dir(follow_symlinks=False) and repo.read(rel) is not None
            ):
                repo.path(rel)  # a link is refused here, before anything is written
                found.append((item.name, rel))
    return found


def _is_scribe(folder: str, text: str) -> bool:
    return folder.lower() == "scribe" or text.startswith("# Scribe")


class Edits:
    """The text files an install changes in more than one step (a charter's lines and its
    memory section; the spawn template's lines and its spawn step): what each held, and
    what the steps planned so far leave in it. Written once, after every step is planned.

    A file whose every line ends in CRLF (a Windows checkout) is planned as LF text and
    written back with CRLF, so what the install adds ends its lines as the file's do."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.before: dict[str, bytes | None] = {}
        self.now: dict[str, str | None] = {}
        self.crlf: set[str] = set()

    def get(self, rel: str) -> str | None:
        """The file's text as the steps planned so far leave it (None: no such file)."""
        if rel not in self.now:
            text = self.repo.text(rel)
            self.before[rel] = None if text is None else text.encode("utf-8")
            if text is not None and _all_crlf(text):
                self.crlf.add(rel)
                text = text.replace("\r\n", "\n")
            self.now[rel] = text
        return self.now[rel]

    def put(self, rel: str, text: str) -> None:
        self.get(rel)
        self.now[rel] = text

    def changed(self) -> list[tuple[str, bytes]]:
        """Every file whose text the planned steps change, and its new bytes."""
        found = []
        for rel, text in sorted(self.now.items()):
            if text is not None and rel in self.crlf:
                text = text.replace("\n", "\r\n")
            after = None if text is None else text.encode("utf-8")
            if after is not None and after != self.before[rel]:
                found.append((rel, after))
        return found

    def write(self) -> None:
        for rel, data in self.changed():
            self.repo.write(rel, data)


def _all_crlf(text: str) -> bool:
    """Whether a text has line ends and every one is CRLF."""
    ends = text.count("\n")
    return ends > 0 and text.count("\r\n") == ends


def plan_charter(repo: Repo, edits: Edits, folder: str, rel: str, record: Record) -> Step:
    """Append (or refresh) the memory section that tells the agent how to use tiermem."""
    text = edits.get(rel) or ""
    try:
        agent = validate.name(folder)
    except UsageError:
        note = "its folder name is not a tiermem agent name"
        return Step(rel, "memory section", "skipped", None, None, note)
    scribe = _is_scribe(folder, text)
    what = "memory section (Scribe)" if scribe else "memory section"
    found = memory_sections(text, agent, scribe)
    if found and not any(s.ours for s in found):
        return Step(rel, what, "edited", note=sealed_sections.edited_note("memory"), kind="text")
    after = with_memory_block(text, agent, scribe)
    edits.put(rel, after)
    step = install_step(rel, what, text.encode(), after.encode(), bool(found), record)
    return _as_text(step)


def unplan_charter(edits: Edits, folder: str, rel: str, record: Record) -> Step:
    """tiermem's own memory sections out of a charter the install record lists; a look-alike
    stays, said so, and so does a sealed section in a charter the record does not list."""
    text = edits.get(rel) or ""
    agent = _agent_name(folder)
    scribe = _is_scribe(folder, text)
    found = memory_sections(text, agent, scribe)
    what = "memory section"
    if any(s.ours for s in found):
        if rel not in record.installed:
            return Step(rel, what, "kept", note=NOT_RECORDED, kind="text")
        after = without_memory_block(text, agent, scribe)
        edits.put(rel, after)
        return Step(rel, what, "removed", text.encode(), after.encode(), kind="text")
    if found:
        return Step(rel, what, "kept", note=sealed_sections.edited_note("memory"), kind="text")
    return Step(rel, what, "absent", kind="text")


def _agent_name(folder: str) -> str:
    """The agent a charter's folder names ('' when tiermem takes no agent by that name)."""
    try:
        return validate.name(folder)
    except UsageError:
        return ""


def _as_text(step: Step) -> Step:
    """A step whose file is written with the other steps on it (`Edits`)."""
    return Step(step.path, step.what, step.state, step.before, step.after, step.note, "text")


# --- Squad's instructions that load whole histories, line by line -------------------------


def line_files(repo: Repo) -> list[str]:
    """The files whose instructions an install replaces line by line: the coordinator's
    prompt, the @copilot member's instructions, Squad's templates (and the copies earlier
    Squads left in `.squad/`) and every charter."""
    found = [
        rel for rel in (COORDINATOR, COPILOT_INSTRUCTIONS, *STRAY_TEMPLATES) if repo.exists(rel)
    ]
    found += sealed_lines.templates(str(repo.root))
    return found + [rel for _, rel in charters(repo)]


def plan_lines(repo: Repo, edits: Edits, record: Record) -> list[Step]:
    """One step for each of Squad's instructions, and each of tiermem's steps, found."""
    return [
        _line_step(rel, item, record)
        for rel, item in _each_line(repo, edits, sealed_lines.replaced)
    ]


def _each_line(
    repo: Repo, edits: Edits, change: Callable[[str], tuple[str, list[sealed_lines.Found]]]
) -> list[tuple[str, sealed_lines.Found]]:
    """Every instruction line `change` found in the line-by-line files, as it changed them."""
    found = []
    for rel in line_files(repo):
        text = edits.get(rel)
        if text is not None:
            after, items = change(text)
            edits.put(rel, after)
            found += [(rel, item) for item in items]
    return found


def _line_step(rel: str, found: sealed_lines.Found, record: Record) -> Step:
    key = f"{rel}#{found.line.key}"
    if found.state == "squad":
        state = "undone" if key in record.installed else "missing"
    else:
        state = found.state
    note = _upgraded(rel) if state == "undone" else _EDITED_LINE if state == "edited" else ""
    return Step(rel, found.line.what, state, note=note, kind="text", number=found.number, key=key)


_EDITED_LINE = (
    "marked as tiermem's line but not as tiermem wrote it (edited by hand, or not tiermem's): "
    "left as it is"
)


def _upgraded(rel: str) -> str:
    """Why something installed is gone again."""
    if rel in (COORDINATOR, COPILOT_INSTRUCTIONS):
        return f"`squad upgrade` rewrites {rel}"
    if rel.startswith(".squad/templates/"):
        return "`squad upgrade` rewrites .squad/templates/"
    return "put back since the install"


def unplan_lines(repo: Repo, edits: Edits, record: Record) -> list[Step]:
    """Squad's own text back in place of each of tiermem's steps the install record lists."""
    steps = []
    for rel in line_files(repo):
        text = edits.get(rel)
        if text is None:
            continue
        after, found = sealed_lines.restored(text, functools.partial(_listed, record, rel))
        edits.put(rel, after)
        steps += [_unline_step(rel, item, record) for item in found]
    return steps


def _listed(record: Record, rel: str, key: str) -> bool:
    """Whether the install record lists tiermem's line `key` in a file."""
    return f"{rel}#{key}" in record.installed


def _unline_step(rel: str, item: sealed_lines.Found, record: Record) -> Step:
    what, number = item.line.what, item.number
    if item.state == "edited":
        return Step(rel, what, "kept", note=_EDITED_LINE, kind="text", number=number)
    if not _listed(record, rel, item.line.key):
        return Step(rel, what, "kept", note=NOT_RECORDED, kind="text", number=number)
    return Step(rel, what, "restored", note="Squad's line", kind="text", number=number)


# --- skills that speak of reading the whole log: reported, left as they are ---------------


def skill_files(repo: Repo) -> list[tuple[str, bool]]:
    """(path, whether Squad's) of every SKILL.md in the folders where Squad copies its skills
    and where the team keeps its own, links left out; tiered-memory is the install's own."""
    found = []
    for folder in (*SQUAD_SKILL_FOLDERS, TEAM_SKILL_FOLDER):
        if not repo.is_dir(folder):
            continue
        with os.scandir(repo.path(folder)) as listing:
            names = sorted(i.name for i in listing if i.is_dir(follow_symlinks=False))
        for name in names:
            rel = f"{folder}/{name}/SKILL.md"
            if name != "tiered-memory" and not (repo.root / rel).is_symlink() and repo.exists(rel):
                found.append((rel, folder != TEAM_SKILL_FOLDER))
    return found


def left_skills(repo: Repo) -> list[Step]:
    """Each skill that sends its reader to a whole history or decision log, named where it
    does, and why the install leaves it: its wording is its author's."""
    steps = []
    for rel, squads in skill_files(repo):
        text = (repo.read(rel) or b"").decode("utf-8", "replace")
        found = sealed_lines.skill_reads(text)
        if found:
            why = _SQUADS_SKILL if squads else _TEAMS_SKILL
            steps.append(
                Step(
                    rel,
                    "a skill that reads the whole log",
                    "left",
                    note=why,
                    kind="text",
                    number=found[0],
                )
            )
    return steps


def left_own_lines(repo: Repo) -> list[Step]:
    """Each line of the team's own words (in the @copilot member's instructions and the
    charters, which the team edits) that sends an agent to a whole history or decision log:
    named where it stands, and left as it is."""
    theirs = _squads_words(repo)
    steps = []
    for rel in [COPILOT_INSTRUCTIONS, *(rel for _, rel in charters(repo))]:
        text = repo.text(rel) if repo.exists(rel) else None
        if text is None:
            continue
        for number in sealed_lines.own_reads(text, theirs):
            what = "a line of the team's own that reads the whole log"
            steps.append(Step(rel, what, "left", note=_OWN_LINE, kind="text", number=number))
    return steps


def _squads_words(repo: Repo) -> str:
    """Every line of Squad's own copies of its files (its templates, the coordinator's
    prompt, the copies earlier Squads left in `.squad/`): Squad's words, not the team's."""
    found = [repo.text(rel) for rel in (COORDINATOR, *STRAY_TEMPLATES) if repo.exists(rel)]
    found += [repo.text(rel) for rel in sealed_lines.templates(str(repo.root))]
    return "\n".join(t for t in found if t)


_OWN_LINE = "the team's own words: left as it is; an agent told so still reads the whole log"
_SQUADS_SKILL = "Squad's wording, loaded on demand and rewritten by `squad upgrade`: left as it is"
_TEAMS_SKILL = "the team's own skill, in its own words: left as it is"


# --- the tiered-memory skill ------------------------------------------------------------


def skill_targets(repo: Repo) -> list[str]:
    """`.squad/skills/` always; `.github/skills/` where Squad put its skills; a copy Squad
    made in `.copilot/skills/` where there is one."""
    return [
        rel
        for rel in SKILLS
        if rel.startswith(".squad/")
        or (rel.startswith(".github/") and repo.is_dir(".github/skills"))
        or repo.exists(rel)
    ]


def plan_skill(repo: Repo, rel: str, record: Record) -> Step:
    """Put the runtime skill in place of Squad's design-only one."""
    raw = repo.read(rel)
    text = None if raw is None else raw.decode("utf-8")
    after = install_texts.SKILL.encode("utf-8")
    whose = install_texts.skill_state(text)
    if whose == "edited":
        note = "tiermem's skill, changed since the install: left as it is"
        return Step(rel, "tiered-memory skill", "edited", raw, raw, note)
    if after != raw:
        if not whose and text is not None and not is_squads_skill(repo, text):
            note = "not Squad's design-only skill; tiermem leaves it as it is"
            return Step(rel, "tiered-memory skill", "skipped", raw, raw, note)
        if not whose:
            _keep_squads_skill(record, rel, text)
        record.created_dirs += repo.missing_dirs(rel)
    return install_step(rel, "tiered-memory skill (runtime)", raw, after, bool(whose), record)


def _keep_squads_skill(record: Record, rel: str, text: str | None) -> None:
    """What uninstall needs to put Squad's skill back: nothing when there was none (None),
    Squad's released text as it is (known by its digest), and nothing at all when it is the
    copy Squad keeps under its templates (a text of the repository's, which may be one the
    team keeps out of git): uninstall takes it again from there."""
    if text is None:
        record.originals[rel] = None
    elif is_released_skill(text):
        record.originals[rel] = text
    else:
        record.originals.pop(rel, None)


def unplan_skill(repo: Repo, rel: str, record: Record) -> Step:
    raw = repo.read(rel)
    what = "tiered-memory skill"
    if raw is None:
        return Step(rel, what, "absent")
    whose = install_texts.skill_state(raw.decode("utf-8", "replace"))
    if whose != "ours":
        note = "changed since the install" if whose else "not tiermem's"
        return Step(rel, what, "kept", raw, raw, f"{note}; left as it is")
    if rel not in record.installed:
        return Step(rel, what, "kept", raw, raw, NOT_RECORDED)
    # None (no skill before), or a text the record's check vouched for as Squad's; else the
    # skill was the copy under Squad's templates, taken from there again.
    original = record.originals.get(rel, repo.text(SQUAD_SKILL_COPY))
    if original is None:
        return Step(rel, what, "removed", raw, None)
    return Step(rel, what, "restored", raw, original.encode("utf-8"), "Squad's design-only skill")


# --- the coordinator's spawn template ---------------------------------------------------


def _spawn_text(variant: str, indent: str) -> str:
    """What tiermem writes in a spawn section now (`sealed_sections.sections`)."""
    return install_texts.spawn_body(indent)


def _full_history(variant: str) -> re.Pattern[str]:
    """Squad's two full-history lines of a spawn template, at any one indentation."""
    first, second = install_texts.SPAWN_LINES[variant].splitlines(keepends=True)
    return re.compile(
        rf"^(?P<indent>[ \t]*){re.escape(first)}(?P=indent){re.escape(second)}", re.MULTILINE
    )


def spawn_home(edits: Edits) -> str:
    """The file that holds the spawn template: Squad 0.10's `spawn-reference.md`, else (in
    the layout of earlier Squads) the coordinator's prompt, when its template is there."""
    if edits.get(SPAWN_TEMPLATE) is not None:
        return SPAWN_TEMPLATE
    text = edits.get(COORDINATOR)
    if text is not None and (
        _full_history(install_texts.FILE_LINES).search(text)
        or sealed_sections.sections(text, install_texts.SPAWN, _spawn_text)
    ):
        return COORDINATOR
    raise UsageError(
        f"no spawn template to change: {SPAWN_TEMPLATE} (Squad 0.10) is missing and "
        f"{COORDINATOR} has no `Read .squad/agents/{{name}}/history.md` line followed by "
        "`Read .squad/decisions.md` (earlier Squads); `squad upgrade` writes Squad's own "
        f"(it rewrites {COORDINATOR} and every file in {TEMPLATES}/) (nothing was written)"
    )


def plan_spawn(repo: Repo, edits: Edits, record: Record) -> Step:
    """Replace the two full-history lines of the spawn template with the tiermem step
    (refreshed where it is, left alone where someone changed it)."""
    rel = spawn_home(edits)
    text = edits.get(rel) or ""
    found = sealed_sections.sections(text, install_texts.SPAWN, _spawn_text)
    ours = [s for s in found if s.ours]
    if found and not ours:
        return Step(
            rel, "spawn step", "edited", note=sealed_sections.edited_note("spawn"), kind="text"
        )
    if ours:
        after = sealed_sections.replaced(
            text, ours[0], install_texts.spawn_block(ours[0].indent, ours[0].variant)
        )
    else:
        variant = install_texts.STATE_LINES if rel == SPAWN_TEMPLATE else install_texts.FILE_LINES
        lines_found = _full_history(variant).search(text)
        if lines_found is None:
            raise UsageError(
                f"{rel} has no `Read agents/{{name}}/history.md` line followed by `Read "
                "decisions.md` as Squad writes them, to replace (nothing was written)"
            )
        new = install_texts.spawn_block(lines_found["indent"], variant)
        after = text[: lines_found.start()] + new + text[lines_found.end() :]
    edits.put(rel, after)
    step = install_step(rel, "spawn step", text.encode(), after.encode(), bool(ours), record)
    return _as_text(step)


def unplan_spawn(edits: Edits, record: Record) -> list[Step]:
    """Squad's two lines back in place of each spawn step tiermem wrote, as tiermem knows
    them, in a template the install record lists."""
    steps = []
    for rel in (SPAWN_TEMPLATE, COORDINATOR):
        text = edits.get(rel)
        found = sealed_sections.sections(text or "", install_texts.SPAWN, _spawn_text)
        if text is None or not found:
            continue
        if rel not in record.installed and any(s.ours for s in found):
            steps.append(Step(rel, "spawn step", "kept", note=NOT_RECORDED, kind="text"))
            found = [s for s in found if not s.ours]
        after = text
        for section in reversed([s for s in found if s.ours]):
            squads = install_texts.squad_spawn_lines(
                section.indent, section.variant or install_texts.STATE_LINES
            )
            after = sealed_sections.replaced(after, section, squads)
        edits.put(rel, after)
        if after != text:
            note = "Squad's full-history lines"
            steps.append(
                Step(rel, "spawn step", "restored", text.encode(), after.encode(), note, "text")
            )
        if any(not s.ours for s in found):
            steps.append(
                Step(
                    rel,
                    "spawn step",
                    "kept",
                    note=sealed_sections.edited_note("spawn"),
                    kind="text",
                )
            )
    return steps


# --- the tiermem store --------------------------------------------------------------------


def _store_paths() -> list[str]:
    return [f".squad/memory/{name}" for name in (*STORE_DIRS, *STORE_FILES)]


def plan_store(repo: Repo, record: Record) -> Step:
    """The store `tiermem serve` needs (created only where it is missing)."""
    for name in STORE_DIRS:  # refused now, not once `tiermem init` has made half of them
        rel = f".squad/memory/{name}"
        if repo.exists(rel) and not repo.is_dir(rel):
            raise UsageError(f"{rel} is not a folder (nothing was written)")
    for name in STORE_FILES:
        repo.read(f".squad/memory/{name}")  # a link or a folder is refused here
    missing = [rel for rel in _store_paths() if not repo.exists(rel)]
    if not record.store:
        record.store = "created" if len(missing) == len(_store_paths()) else "found"
    state = install_state(STORE, not missing, False, record)
    return Step(STORE, "tiermem store (hot, cold, wiki, archive)", state, kind="store")


@functools.cache
def _fresh_store_files() -> dict[str, bytes]:
    """The files `tiermem init` makes, as it makes them today."""
    with tempfile.TemporaryDirectory() as scratch:
        bootstrap.init_store(Path(scratch), squad_files=False)
        memory = Layout(Path(scratch)).memory
        return {name: (memory / name).read_bytes() for name in STORE_FILES}


def unplan_store(repo: Repo, record: Record) -> Step:
    """The store goes only when the install made it and it still holds no memory (what is
    left of it, when an uninstall was cut short while removing it)."""
    what = "tiermem store"
    if not any(repo.exists(rel) for rel in _store_paths()):
        return Step(STORE, what, "absent", kind="store")
    if record.store != "created":
        return Step(STORE, what, "kept", kind="store", note="it was there before")
    if not _unused_store(repo):
        note = "it holds the team's memory; delete it by hand if you mean to"
        return Step(STORE, what, "kept", kind="store", note=note)
    for rel in (".squad/memory/.locks", *(f".squad/memory/{name}" for name in _LOCAL)):
        repo.path(rel)  # a link is refused now, before anything is removed
    return Step(STORE, what, "removed", kind="store", note="it held no memory")


def _unused_store(repo: Repo) -> bool:
    fresh = _fresh_store_files()
    for name in STORE_DIRS:
        folder = repo.path(f".squad/memory/{name}")
        if folder.is_dir() and any(not files.is_temp(p) for p in folder.iterdir()):
            return False
    return all(repo.read(f".squad/memory/{name}") in (fresh[name], None) for name in fresh)


def remove_store(repo: Repo) -> bool:
    """Delete an unused store: its folders, files, index, lock files and this clone's own
    files (`tiermem-local/`, and what an earlier tiermem kept in Squad's `local/`, which
    stays with everything of Squad's in it). Only temp files are taken out of its folders:
    when one holds anything else (written by something that took no lock), the store stays
    (False). The store's lock goes last, so a writer that waited for it finds the store
    gone."""
    memory = repo.path(".squad/memory")
    folders = [repo.path(f".squad/memory/{name}") for name in STORE_DIRS]
    for folder in (f for f in folders if f.is_dir()):
        for temp in (p for p in folder.iterdir() if files.is_temp(p)):
            temp.unlink(missing_ok=True)
    if any(f.is_dir() and any(f.iterdir()) for f in folders):
        return False
    for folder in (f for f in folders if f.is_dir()):
        folder.rmdir()
    for name in (*STORE_FILES, *_LOCAL, LEDGER_NAME):
        path = repo.path(f".squad/memory/{name}")
        if not path.is_symlink() and path.is_file():
            path.unlink()
    for rel in (f".squad/memory/{LOCAL_FOLDER}/report", ".squad/memory/local/report"):
        if repo.is_dir(rel) and not any(repo.path(rel).iterdir()):
            repo.path(rel).rmdir()
    for item in memory.iterdir():
        if _TRANSIENT.fullmatch(item.name) and not item.is_symlink():
            item.unlink(missing_ok=True)
    _remove_clone_files(repo)
    locks = repo.path(".squad/memory/.locks")
    if locks.is_dir():
        for lock in sorted(locks.iterdir(), key=lambda p: p.name == files.STORE_LOCK):
            lock.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # a writer that came since made its lock again
            locks.rmdir()
    return True


def _remove_clone_files(repo: Repo) -> None:
    """This clone's key (which sealed the index) and the ignore file made with it, in
    `tiermem-local/` (which goes once empty) and where an earlier tiermem kept them in
    `local/` (which may be Squad's, and stays)."""
    for folder in (LOCAL_FOLDER, "local"):
        if not repo.is_dir(f".squad/memory/{folder}"):
            continue
        local = repo.path(f".squad/memory/{folder}")
        for name, made in ((clone.KEY_NAME, None), (".gitignore", clone.IGNORE_ALL.encode())):
            path = local / name
            if path.is_file() and not path.is_symlink() and made in (None, path.read_bytes()):
                path.unlink()
    local = repo.path(f".squad/memory/{LOCAL_FOLDER}")
    if repo.is_dir(f".squad/memory/{LOCAL_FOLDER}") and not any(local.iterdir()):
        local.rmdir()


# --- planning, checking, applying ---------------------------------------------------------


def plan(repo: Repo, coordinator: bool) -> tuple[list[Step], Record, Edits]:
    """Every step of an install, the record it leaves, and the text files it changes
    (nothing is written)."""
    old = Record.load(repo)
    record = Record.load(repo)
    record.coordinator = coordinator or old.coordinator
    edits = Edits(repo)
    steps = [plan_store(repo, record), plan_mcp(repo, MCP_JSON, record)]
    if _is_link(repo, ".vscode"):
        note = ".vscode is a symbolic link; register tiermem there by hand (docs/mcp.md)"
        steps.append(Step(VSCODE_MCP, "tiermem MCP server", "skipped", note=note))
    elif repo.is_dir(".vscode"):
        steps.append(plan_mcp(repo, VSCODE_MCP, record))
    if not _is_link(repo, ".copilot") and repo.exists(COPILOT_MCP):
        steps.append(plan_mcp(repo, COPILOT_MCP, record))  # where the team keeps one
    if record.coordinator:
        steps += plan_lines(repo, edits, record)
    steps += [plan_charter(repo, edits, folder, rel, record) for folder, rel in charters(repo)]
    steps += [plan_skill(repo, rel, record) for rel in skill_targets(repo)]
    if record.coordinator:
        steps.append(plan_spawn(repo, edits, record))
        steps += left_skills(repo)
        steps += left_own_lines(repo)
    # A step left alone stays recorded only as it was (an edited line installed once).
    record.installed = [
        s.recorded
        for s in steps
        if s.state not in ("skipped", "edited", "left") or s.recorded in old.installed
    ]
    manifest = repo.read(MANIFEST)
    after = record.render()
    _readable(after, repo)
    steps.append(install_step(MANIFEST, "install record", manifest, after, bool(manifest), old))
    return steps, record, edits


def _readable(record: bytes, repo: Repo) -> None:
    """Refuse to write a record that the next uninstall would refuse to read."""
    try:
        Record.parse(record.decode("utf-8"), repo)
    except UsageError as exc:
        raise UsageError(
            f"the install record this install would write could not be read back ({exc}); "
            "nothing was written"
        ) from None


def _is_link(repo: Repo, rel: str) -> bool:
    """Whether `rel` (directly under the root) is a symbolic link, which is left alone."""
    return (repo.root / rel).is_symlink()


def check(root: str | Path | None, coordinator: bool = False) -> Report:
    """What is installed, missing, undone since the install (by `squad upgrade`, say)."""
    repo = open_repo(root)
    said = refuse_remote_state(repo)
    return Report("check", [*said, *plan(repo, coordinator)[0]])


def install(root: str | Path | None, coordinator: bool = False) -> Report:
    """Put everything in place; a second run changes nothing."""
    repo = open_repo(root)
    said = refuse_remote_state(repo)
    steps, _, edits = plan(repo, coordinator)  # a refusal comes before any write
    if not _writes(steps, edits):
        return Report("install", [*said, *(_installed(s) for s in steps)])
    with _alone(repo, repo.is_dir(".squad/memory/hot")):
        steps, _, edits = plan(repo, coordinator)
        repo.path(".squad/memory").mkdir(parents=True, exist_ok=True)
        repo.remove_dead_temps(_TEMP_FOLDERS)
        # The record goes first: were the run cut short, it already says what the install
        # puts in (a store it makes included), and the next run finishes the job.
        for step in steps:
            if step.path == MANIFEST:
                _write(repo, step)
        if any(s.kind == "store" and s.state != "installed" for s in steps):
            bootstrap.init_store(repo.root, squad_files=False)
        for step in steps:
            if step.path != MANIFEST:
                _write(repo, step)
        edits.write()
    return Report("install", [*said, *(_installed(s) for s in steps)])


def _writes(steps: list[Step], edits: Edits) -> bool:
    """Whether applying the planned steps changes anything."""
    store = any(s.kind == "store" and s.state in ("removed", "missing", "undone") for s in steps)
    return store or bool(edits.changed()) or any(s.kind == "file" and s.writes for s in steps)


@contextlib.contextmanager
def _alone(repo: Repo, store: bool) -> Iterator[None]:
    """Hold the store's lock alone while an install or uninstall plans and writes, so that
    no writer (an editor's MCP server, a `hot note`) writes into what it takes away."""
    if not store:
        yield
        return
    with files.store_locked(Layout(repo.root), alone=True):
        yield


def _installed(step: Step) -> Step:
    """The step as an install reports it, having done it."""
    done = {"installed": "unchanged", "outdated": "updated", "undone": "restored"}
    state = (
        step.state if step.state in ("skipped", "edited", "left") else done.get(step.state, "added")
    )
    return Step(
        step.path, step.what, state, step.before, step.after, step.note, step.kind, step.number
    )


def uninstall(root: str | Path | None) -> Report:
    """Take out everything the install put in (what its record lists), putting back Squad's
    own bytes.

    The record is checked whole, and every step planned, before the first write; then the
    store's lock is taken alone and the steps planned again under it, and applied."""
    repo = open_repo(root)
    steps, last, edits = plan_uninstall(repo)  # a refusal comes before any write
    if _writes([*steps, last], edits):
        steps, last = _uninstalled(repo)
    if repo.is_dir(".squad/memory/hot"):
        local_state.move(Layout(repo.root))  # the store stays: no rule of it hides Squad's
    return Report("uninstall", [s for s in [*steps, last] if s.state != "absent"])


def _uninstalled(repo: Repo) -> tuple[list[Step], Step]:
    """The uninstall's steps applied, planned again with the store's lock held alone."""
    with _alone(repo, any(repo.exists(rel) for rel in _store_paths())):
        steps, last, edits = plan_uninstall(repo)
        folders = _created_dirs(repo, Record.load(repo), [s for s in steps if s.state == "removed"])
        repo.remove_dead_temps(_TEMP_FOLDERS)
        for step in steps:
            _write(repo, step)
        edits.write()
        removing = any(s.kind == "store" and s.state == "removed" for s in steps)
        if removing and not remove_store(repo):
            steps = [_store_kept(s) if s.kind == "store" else s for s in steps]
        for folder in folders:
            if repo.is_dir(folder) and not any(repo.path(folder).iterdir()):
                repo.path(folder).rmdir()
        _write(repo, last)  # the record goes last: a run cut short can be run again
    return steps, last


def _store_kept(step: Step) -> Step:
    note = "memory was written into it while it was being removed; it stays"
    return Step(step.path, step.what, "kept", kind="store", note=note)


def plan_uninstall(repo: Repo) -> tuple[list[Step], Step, Edits]:
    """Every step of an uninstall, the record's own last, and the text files it changes."""
    record = Record.load(repo)
    edits = Edits(repo)
    steps = [unplan_mcp(repo, MCP_JSON, record)]
    if not _is_link(repo, ".vscode") and repo.read(VSCODE_MCP) is not None:
        steps.append(unplan_mcp(repo, VSCODE_MCP, record))
    if not _is_link(repo, ".copilot") and repo.read(COPILOT_MCP) is not None:
        steps.append(unplan_mcp(repo, COPILOT_MCP, record))
    steps += unplan_lines(repo, edits, record)
    steps += [unplan_charter(edits, folder, rel, record) for folder, rel in charters(repo)]
    steps += [unplan_skill(repo, rel, record) for rel in SKILLS]
    steps += [*unplan_spawn(edits, record), unplan_store(repo, record)]
    _created_dirs(repo, record, [s for s in steps if s.state == "removed"])  # links refused
    manifest = repo.read(MANIFEST)
    last = Step(MANIFEST, "install record", "removed" if manifest else "absent", manifest)
    return steps, last, edits


def _created_dirs(repo: Repo, record: Record, steps: list[Step]) -> list[str]:
    """The folders uninstall removes once empty, innermost first, each checked now: a
    removed skill takes its own folder along; the folders above it go only when the record
    (checked to name none but those an install makes) says the install made them."""
    skills = [str(PurePosixPath(s.path).parent) for s in steps if s.path in SKILLS]
    found = sorted({*record.created_dirs, *skills}, key=len, reverse=True)
    for rel in found:
        repo.path(rel)  # a link or a path out of the repository is refused before any write
    return found


def _write(repo: Repo, step: Step) -> None:
    if step.kind != "file" or not step.writes:
        return
    if step.after is None:
        repo.path(step.path).unlink(missing_ok=True)
    else:
        repo.write(step.path, step.after)
