"""The `tiermem` command line's parsers: argparse's, built only for the command a line runs.

`main` reads the commands users run most without them (`plain`); every other line, and every
line that asks for help or holds a mistake, is parsed here, so help and errors are argparse's.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Collection, Sequence

from .handlers import (
    cmd_bench,
    cmd_demo,
    cmd_init,
    cmd_merge_file,
    cmd_operation,
    cmd_serve,
    cmd_squad,
    one_line,
)

TYPE_CHECKING = False  # typing is not imported at start-up
if TYPE_CHECKING:
    from typing import Any, NoReturn

Handler = Callable[[argparse.Namespace], int]

_DESCRIPTION = """\
Tiered memory for AI agent teams. Each agent has a small hot tier (the current session),
cold summaries of past sessions and a team wiki of durable decisions and conventions, all
as markdown under .squad/memory/, with a lossless archive of raw text. Scribe compresses,
ages, promotes and supersedes; `spawn` renders each agent's prompt within a token budget.
"""

_EPILOG = """\
The store is found from --root, then TIERMEM_ROOT, then the nearest folder above the
working directory that holds .squad/. --now (or TIERMEM_NOW) fixes the clock for every
time-based rule. Bad input gets one line on stderr and exit status 2; nothing is written.
"""


class _Width(argparse.HelpFormatter):
    """Help as argparse writes it, at the terminal's width, asked for only when help is
    written: argparse makes a formatter for every argument it is given (to check it), and
    asking the terminal imports a module that brings three compression libraries."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or 80)
        self._ask, self._most = width is None, max_help_position

    def format_help(self) -> str:
        if self._ask:
            import shutil

            self._width = shutil.get_terminal_size().columns - 2
            self._max_help_position = min(
                self._most, max(self._width - 20, 2 * self._indent_increment)
            )
        return super().format_help()


class _RawWidth(_Width, argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (examples), at the terminal's width."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2, whose subcommands are built only
    for the command line it parses (see `_Choices`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        given = kwargs.get("formatter_class", argparse.HelpFormatter)
        raw = issubclass(given, argparse.RawDescriptionHelpFormatter)
        kwargs["formatter_class"] = _RawWidth if raw else _Width
        super().__init__(*args, **kwargs)
        self.wanted: Sequence[str] = ()  # the words naming its subcommand, and theirs
        self.choices: list[_Choices] = []

    def add_subparsers(self, **kwargs: Any) -> Any:
        # What argparse would format from the positionals before them, of which ours have
        # none: formatting it would ask the terminal for its width.
        kwargs.setdefault("prog", self.prog)
        choices = _Choices(super().add_subparsers(**kwargs), self.wanted)
        self.choices.append(choices)
        return choices

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")

    def unmatched(self) -> bool:
        """Whether a word meant as a subcommand here or below named none."""
        return any(c.unmatched() for c in self.choices)


class _Skipped:
    """Stands in for the parser of a command the command line does not run: what is added
    to it is dropped (building it would only cost start-up)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to add to."""

    def set_defaults(self, **kwargs: Any) -> None:
        """Nothing to set."""

    def add_mutually_exclusive_group(self, **kwargs: Any) -> _Skipped:
        return self

    def add_subparsers(self, **kwargs: Any) -> _Skipped:
        return self

    def add_parser(self, name: str, **kwargs: Any) -> _Skipped:
        return self


class _Choices:
    """A parser's subcommands, of which only the one the command line names is built
    (every one when it names none)."""

    def __init__(self, action: Any, wanted: Sequence[str]) -> None:
        self.action = action
        self.wanted = wanted
        self.found: _Parser | None = None

    def add_parser(self, name: str, **kwargs: Any) -> _Parser | _Skipped:
        if self.wanted and name != self.wanted[0]:
            return _Skipped()
        parser: _Parser = self.action.add_parser(name, **kwargs)
        if self.wanted:
            parser.wanted, self.found = self.wanted[1:], parser
        return parser

    def unmatched(self) -> bool:
        """Whether the command line named a subcommand here that is not one, or below."""
        if self.found is None:
            return bool(self.wanted)
        return self.found.unmatched()


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="folder holding .squad/ (default: TIERMEM_ROOT, else nearest above)",
    )
    parser.add_argument(
        "--now",
        default=argparse.SUPPRESS,
        metavar="ISO-8601",
        help="use this time as now (default: TIERMEM_NOW, else the clock)",
    )


def _format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )


# --- parser ---------------------------------------------------------------------------


def _add(
    sub: Any, name: str, handler: Handler, help_text: str, **kw: Any
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=help_text, **kw
    )
    _common(parser)
    parser.set_defaults(handler=handler)
    return parser


def _examples(text: str) -> dict[str, Any]:
    """An epilog of examples, printed as written."""
    return {"epilog": text, "formatter_class": argparse.RawDescriptionHelpFormatter}


_HOT_EPILOG = """examples:
  tiermem hot set flight --task "Fix the publish pipeline" --why "v0.9.1 broke installs"
  tiermem hot action flight "Ran npm pack; found file: refs in package.json"
  tiermem hot decide flight "Pin squad-sdk to an exact version"
  tiermem hot block flight "Waiting on the npm token rotation"
  git log -1 --format=%B | tiermem hot note flight -
  tiermem hot show flight
  tiermem hot set eecom --new-agent --task "Start the reader rewrite"   # a new agent
"""


_SCRIBE_EPILOG = """examples:
  tiermem scribe end-session flight     # hot -> a dated cold summary; blockers carried
  tiermem scribe end-session --all
  tiermem scribe run --dry-run          # what maintenance would do, writing nothing
  tiermem scribe run                    # then commit .squad/memory/ with the team
"""


_SPAWN_EPILOG = """examples:
  tiermem spawn flight --task "Publish v0.9.2 to npm" --auto
  tiermem spawn flight --task "Review the release ADR" --include-wiki release --budget 3000
  tiermem spawn flight --task - --auto --format json < task.md   # the prompt and its sources
"""


def _operations(sub: Any, group: str) -> None:
    """A command made of operations (`operations.OPERATIONS`): one, or a group of actions."""
    from ..operations import OPERATIONS

    ops = [op for op in OPERATIONS if op.command[:1] == (group,)]
    if len(ops) == 1 and ops[0].command == (group,) and not _verbs(ops[0]):
        _operation(sub, (group,), ops[0], ops[0].help, {})
        return
    about = _HELP.get(group) or "; ".join(f"{op.command[-1]}: {op.help}" for op in ops)
    parent = _add(sub, group, cmd_operation, about, **_epilog((group,)))
    dest, metavar = _GROUP_WORDS.get(group, (f"{group}_action", "ACTION"))
    actions = parent.add_subparsers(dest=dest, metavar=metavar, required=True, parser_class=_Parser)
    for op in ops:
        for verb, fixed, help_text in _verbs(op) or [(op.command[-1], {}, op.help)]:
            _operation(actions, (group, verb), op, help_text, fixed)


# Where argparse keeps a group's action, and how its help names it (default: ACTION).
_GROUP_WORDS = {"import": ("import_source", "SOURCE")}


def _verbs(op: Any) -> list[tuple[str, dict[str, str], str]]:
    """(verb, the field it sets, its help) of an operation whose command ends with a verb."""
    from ..options import options_of

    return [
        (verb, {name: value}, help_text)
        for name, item, _ in options_of(op.request)
        if item.cli == "verb"
        for verb, value, help_text in item.verbs
    ]


def _operation(
    sub: Any, words: tuple[str, ...], op: Any, help_text: str, fixed: dict[str, str]
) -> None:
    """The parser of one operation's command: its request's flags, `--format`, and what
    the command line adds of its own (`_EXTRAS`)."""
    parser = _add(sub, words[-1], cmd_operation, help_text, **_epilog(words))
    if isinstance(parser, _Skipped):
        return  # the request's fields are not read for another command
    parser.set_defaults(door=op.door, **fixed)
    _EXTRAS.get(words, _flags_only)(parser, functools.partial(add_flags, parser, op.request))
    if op.formats:
        parser.add_argument(
            "--format",
            choices=op.formats,
            default=op.formats[0],
            help=f"output format (default: {op.formats[0]})",
        )


def _epilog(words: tuple[str, ...]) -> dict[str, Any]:
    text = _EPILOGS.get(words)
    return {} if text is None else _examples(text)


# Adds the request's flags: some into the groups named, the positionals named optional.
Flags = Callable[[dict[str, object], Collection[str]], None]


def _flags_only(parser: argparse.ArgumentParser, flags: Flags) -> None:
    flags({}, ())


def _spawn_modes(parser: argparse.ArgumentParser, flags: Flags) -> None:
    """`--refs` or `--inline`: the one the request knows, and its opposite, the default."""
    mode = parser.add_mutually_exclusive_group()
    flags({"refs": mode}, ())
    mode.add_argument("--inline", action="store_true", help="inline cold and wiki text (default)")


def _every_agent(parser: argparse.ArgumentParser, flags: Flags) -> None:
    """`scribe end-session --all`: every agent's session, one at a time."""
    flags({}, {"agent"})
    parser.add_argument("--all", action="store_true", help="end the session of every agent")


def _browser(parser: argparse.ArgumentParser, flags: Flags) -> None:
    flags({}, ())
    parser.add_argument("--open", action="store_true", help="open the page in a browser")


# What a command line adds to an operation's fields: a way to say the default, a loop over
# every agent, a browser.
_EXTRAS: dict[tuple[str, ...], Callable[[argparse.ArgumentParser, Flags], None]] = {
    ("spawn",): _spawn_modes,
    ("scribe", "end-session"): _every_agent,
    ("report",): _browser,
}


def add_flags(
    parser: Any, request: type, into: dict[str, Any] | None = None, optional: Collection[str] = ()
) -> None:
    """The flags of a request's fields (`options`), each added to the parser or to the group
    `into` names for it; a positional named `optional` may be left out."""
    from ..options import REQUIRED, options_of

    # As written ("bool", "int | None"...), read as `inspect.get_annotations` reads a class's
    # own: inspect brings ast, dis and tokenize, which a spawn otherwise never loads.
    hints = dict(request.__dict__.get("__annotations__", {}))  # noqa: RUF063
    for name, item, default in options_of(request):
        if item.cli in ("verb", "none"):
            continue  # set by the command's words, or by the command line itself
        target = (into or {}).get(name, parser)
        how: dict[str, Any] = {"help": _flag_help(item, default), "metavar": item.metavar}
        if item.choices:
            how.update(choices=item.choices, metavar=None)
        if item.cli in ("positional", "joined"):
            nargs = "+" if item.cli == "joined" else "?" if name in optional else None
            target.add_argument(name, **how, nargs=nargs)
            continue
        flag = "--" + name.replace("_", "-")
        if hints[name] == "bool":
            target.add_argument(flag, action="store_true", help=how["help"])
            continue
        how.update(_FLAG_KINDS[item.cli], required=default is REQUIRED)
        if default is not REQUIRED and not isinstance(default, tuple):
            how["default"] = default  # argparse holds it, as a plain line does (`plain`)
        how.update(type=int) if hints[name].startswith("int") else None
        target.add_argument(flag, **how)


# How argparse takes each kind of flag (`options.Option.cli`).
_FLAG_KINDS: dict[str, dict[str, Any]] = {
    "flag": {},
    "repeat": {"action": "append"},
    "words": {"nargs": "*"},
}


def _flag_help(item: Any, default: object) -> str:
    """An option's help, saying that `-` reads stdin and the default, where it has one."""
    from ..options import REQUIRED, described

    said = described(item) + (" ('-' reads stdin)" if item.stdin else "")
    shown = default not in (REQUIRED, None, "", ()) and not isinstance(default, bool)
    return said + (f" (default: {default})" if shown else "")


def _bench_parsers(sub: Any) -> None:
    """`bench` and the commands it registers (its code is only imported when one runs)."""
    bench = _add(sub, "bench", cmd_bench, _HELP["bench"])
    verbs = bench.add_subparsers(
        dest="bench_action", metavar="ACTION", required=True, parser_class=_Parser
    )
    if isinstance(verbs, _Skipped):
        return
    from ..bench.arguments import register

    register(lambda name, help_text: _add(verbs, name, cmd_bench, help_text))


_IMPORT_EPILOG = """\
reads: agents/*/history*.md, decisions.md, decisions-archive*.md, decisions/*.md,
  decisions/archive/*.md, decisions/inbox/*.md, log/*.md and orchestration-log/*.md.
Every file is archived byte for byte before its sections become entries; Scribe's rules
then promote, supersede and age them. Only .squad/memory/ is written, and a file imported
before with the same content is skipped, so a second run changes nothing.
A file with bytes that are not UTF-8 is imported all the same: its text reads them as
U+FFFD, the archive keeps the original bytes, and a note on stderr names the line.
exit status: 0 done (notes included); 1 some files were skipped (binary, unreadable, a link
out of .squad/: each named on stderr as `tiermem: skipped FILE:LINE: why`), the rest
imported; 2 bad input, and nothing was written.

examples:
  cd my-repo && tiermem import squad --dry-run   # where each entry would land
  tiermem import squad && tiermem stats
"""


_SQUAD_INSTALL_EPILOG = """\
writes: .mcp.json (and .vscode/mcp.json where .vscode/ exists): a `tiermem` server beside
  Squad's own, spliced into the file's text (every other byte kept: comments, order, line
  ends, a name twice, numbers as spelled); .squad/memory/: the tiermem store;
  every .squad/agents/*/charter.md: a marked memory section (Scribe's tells it to end
  sessions and run maintenance); .squad/skills/ and .github/skills/tiered-memory/SKILL.md:
  the runtime skill in place of Squad's design-only one; with --coordinator, the spawn
  template (.squad/templates/spawn-reference.md, or in an earlier Squad the template in
  .github/agents/squad.agent.md): the tiermem spawn step in place of the lines that load a
  whole history.md and decisions.md, and each line that sends an agent to them whole in
  .github/agents/squad.agent.md, .github/copilot-instructions.md, .squad/templates/ (the
  .template copies too), the template copies earlier Squads left in .squad/ and the
  charters: tiermem's step, marked <!-- tiermem:line KEY SEAL -->. Squad's skills that say
  the same are listed as `left`, with why.
Every section and line it writes carries the seal of its text: install and --uninstall
change only those, and leave a look-alike, or one a person edited, as it is (`edited` in
--check, `kept` by --uninstall). What it put in is marked in place and listed in the install
record, .squad/memory/tiermem-install.json (committed; it holds no text of the team's files,
so a token in an ignored .mcp.json never reaches git): --uninstall takes out only what the
record lists, and puts back Squad's bytes; with no record it changes nothing. A second
install changes nothing. An install or uninstall cut short leaves no temp file beside the
team's files, and running it again finishes it; --uninstall holds the store's lock alone,
so a write racing it (`hot note`, an editor's MCP server) is kept or refused, never lost.
No path is read or written through a symbolic link, and an install record that names
anything an install does not write is refused.
exit status: 0 done; 1 (--check) something is missing, outdated or undone (`squad upgrade`
rewrites .squad/templates/ and .github/agents/squad.agent.md: each line it undid is named);
2 bad input or a refused repository (a link, a state backend other than local, a team kept
elsewhere, an install record tiermem did not write as it writes them, an MCP file whose
entry cannot go in or out without changing anything else), and nothing was written.
"""


def _squad_parsers(sub: Any) -> None:
    squad = _add(sub, "squad", cmd_squad, _HELP["squad"])
    actions = squad.add_subparsers(
        dest="squad_action", metavar="ACTION", required=True, parser_class=_Parser
    )
    install = _add(
        actions,
        "install",
        cmd_squad,
        "wire tiermem into this Squad team: MCP server, charters, skill, spawn step",
        **_examples(_SQUAD_INSTALL_EPILOG),
    )
    install.add_argument(
        "--coordinator",
        action="store_true",
        help="also replace every instruction of Squad's that loads a whole history or the "
        "whole decision log (the spawn template's first) with tiermem's step",
    )
    mode = install.add_mutually_exclusive_group()
    mode.add_argument(
        "--check",
        action="store_true",
        help="report what is installed, missing or undone (exit 1 if anything is); write nothing",
    )
    mode.add_argument(
        "--uninstall",
        action="store_true",
        help="take out what the install put in (what its record lists); Squad's files come "
        "back as Squad wrote them",
    )
    _format(install)


_SEARCH_EPILOG = """examples:
  tiermem search "npm publish file: refs"
  tiermem search "token refresh" --agent flight --limit 5
  tiermem search "release tag" --tier wiki --format json
  tiermem search '"retry budget" parser'                   # a quoted run of words as a phrase
  tiermem search c-6f342dcc23 a-c832f390f7-5e01d2b9aa#2      # read entries by the ids search gives
"""


_INIT_EPILOG = """\
Sets up the .squad/ found above the working directory (as every command finds
it), else one in the working directory; --root names another folder. A second
init changes nothing.

examples:
  cd my-repo && tiermem init && git add .squad .gitattributes
  tiermem init --merge-driver      # this clone merges tier files entry by entry
  tiermem init --root ../other-repo
"""


def _init_parser(sub: Any) -> None:
    init = _add(sub, "init", cmd_init, _HELP["init"], **_examples(_INIT_EPILOG))
    init.add_argument(
        "--merge-driver",
        action="store_true",
        help="also merge tier files entry by entry in this clone's git merges "
        "(set in .git/info/attributes and .git/config; other clones keep merge=union)",
    )


def _merge_file_parser(sub: Any) -> None:
    merge = _add(sub, "merge-file", cmd_merge_file, _HELP["merge-file"])
    merge.add_argument("base", metavar="BASE", help="the common ancestor's version (git's %%O)")
    merge.add_argument("ours", metavar="OURS", help="our version, merged in place (%%A)")
    merge.add_argument("theirs", metavar="THEIRS", help="their version (%%B)")


def _demo_parser(sub: Any) -> None:
    demo = _add(sub, "demo", cmd_demo, _HELP["demo"])
    demo.add_argument(
        "--keep", action="store_true", help="keep the scratch folder and print its path"
    )


_DOCTOR_EPILOG = """\
checks: links under .squad/ (never followed), the store's own folders and files, temp files
  of killed writes, tier files that do not parse, hold an id twice, or were read mended (an
  id that breaks the id rule, an author that is no agent's name, an entry's metadata line or
  a second file header a merge left inside a text), archive records that fail their size and
  hash, citations of records that are not there, names tiermem never reads, text waiting for
  Scribe, a hot tier holding two clones' sessions (a note), and the index.
--repair: removes stale temp files; rewrites a tier file read mended or holding an id twice
  as it was read (the losing version archived; a renamed id's old one, percent-encoded, in
  the audit); moves damaged records to .squad/memory/damaged/ and archives their text again
  (citing entries follow); rebuilds an index that is damaged, foreign or out of date; removes
  links in place of the index or the lock folder. Anything else is left for a person, and
  named.
exit status: 0 no problem left; 1 problems remain; 2 bad input.
"""


def _serve_parser(sub: Any) -> None:
    _add(sub, "serve", cmd_serve, _HELP["serve"])


# Each command's epilog: what it reads or checks, its exit statuses, examples.
_EPILOGS = {
    ("hot",): _HOT_EPILOG,
    ("scribe",): _SCRIBE_EPILOG,
    ("spawn",): _SPAWN_EPILOG,
    ("search",): _SEARCH_EPILOG,
    ("import", "squad"): _IMPORT_EPILOG,
    ("doctor",): _DOCTOR_EPILOG,
}

# The help of each command that is not one operation (whose help is its declaration's).
_HELP = {
    "init": "create .squad/memory/ with its tiers, config and git settings",
    "demo": "run a built-in example team in a scratch folder and explain it",
    "hot": "read and write an agent's hot tier (the current session)",
    "merge-file": "git merge driver: merge three versions of a tier file entry by entry",
    "scribe": "run the memory keeper",
    "decision": "record team decisions",
    "wiki": "the team wiki: durable knowledge by topic",
    "import": "import existing team memory",
    "squad": "wire tiermem into a Squad team (install, check, uninstall)",
    "serve": "serve memory to agents over MCP (stdio)",
    "bench": "benchmarks: replay a team, evaluate probes, measure speed",
}

# What each command does, in the words of the README's command table (see `reference`).
_ABOUT = {
    "init": (
        "create `.squad/memory/` with its tiers, a commented `config.toml`, and git settings "
        "(index ignored, tier files merged with `merge=union`; `--merge-driver`: this clone "
        "merges them entry by entry)"
    ),
    "demo": (
        "a small team's week, in a scratch folder, through every tier, explained step by step"
    ),
    "hot": (
        "the current session; `TEXT` of `-` reads stdin; `--source tool|web` marks text "
        "untrusted; `--new-agent` for an agent the team does not know yet"
    ),
    "search": (
        "BM25 over every tier and the archive; `--agent` searches that agent's memory, the "
        "team's and the wiki; a QUERY of entry ids reads those entries whole (in text as in "
        "JSON); each result says which session and source it came from"
    ),
    "reindex": (
        "rebuild the index from the files, or report how it differs from them (row by row), "
        "an index not built on this clone, and this clone's own files that git tracks"
    ),
    "merge-file": (
        "the git merge driver `init --merge-driver` sets up: tier files merged entry by entry"
    ),
    "stats": (
        "entries, bytes and tokens per agent and tier (a long entry's parts and an archive "
        "record's chunks counted once; the report shows the same figures), against Squad's "
        "spawn load"
    ),
    "report": (
        "one self-contained HTML page of the store (by default in "
        "`.squad/memory/tiermem-local/report/`, git-ignored): agents against their budgets, "
        "Squad's spawn load against tiermem's, Scribe's history, the wiki by topic, stale and "
        "superseded entries, a spawn preview entry by entry, every entry with where it came "
        "from ([docs/report.md](docs/report.md))"
    ),
    "doctor": (
        "check a store after a merge or a crash (links, temp files, ids twice, entries a "
        "merge or an edit left malformed, ids that break the id rule, damaged records, an "
        "index that is damaged, differs from the files or was not built on this clone, this "
        "clone's files tracked by git) and repair what is safe"
    ),
    "scribe": (
        "`end-session`: compress hot into a dated cold entry; reset hot, carrying open "
        "blockers; `run`: maintenance: the decision inbox merged into `decisions.md` (said "
        "first: which files, how many lines), what the team wrote in Squad's files since the "
        "import followed section by section, checkpoints, supersede, promote, expire, cold "
        "budget, and this clone's recorded use folded into the team's use ledger "
        "(`last-use.txt`, one tracked file; reads never change one)"
    ),
    "decision": ("record a team decision (also in `.squad/decisions.md`)"),
    "wiki": (
        "the team wiki: `write` asks Scribe for an entry on a topic, `list` and `show` read it"
    ),
    "spawn": ("the prompt for a spawn, within a token budget"),
    "log": ("which spawns got an entry, and what each spawn got (this clone's spawn log)"),
    "forget": (
        "retire a wrong or stale entry from every tier (its text stays in the archive), or a "
        "passage of archived text from search and spawns (its bytes kept); `--purge` deletes "
        "the text everywhere tiermem keeps it, for a leaked credential"
    ),
    "import": (
        "an existing `.squad/` into tiers, archiving every byte first, as Squad's model has "
        "it: each history stays its agent's (its Core Context one standing entry), the team's "
        "decisions go to the wiki (`--dry-run` rehearses it on a scratch copy and says where "
        "every section goes); each section dated by its own date, else its file's last "
        "commit; every credential replaced named by file and line"
    ),
    "squad": (
        "adopt tiermem in a Squad team: the MCP server in `.mcp.json` (and the team's "
        "`.vscode/mcp.json` and `.copilot/mcp-config.json`), a memory section in every charter, "
        "the `tiered-memory` skill, and with `--coordinator` every instruction of Squad's that "
        "loads a whole history or decision log (the spawn template's, the coordinator's, "
        "@copilot's, the templates', each charter's), and its step that appends to "
        "`history.md`, replaced by the tiermem step, sealed; install and `--uninstall` change "
        "only what they wrote, never Squad's governed memory; Squad 0.10 and earlier layouts, "
        "`teamRoot` `.` (or this repository's path from another machine), JSONC editor files "
        "([docs/squad.md](docs/squad.md))"
    ),
    "serve": ("the MCP server over stdio ([docs/mcp.md](docs/mcp.md))"),
    "bench": ("the benchmarks ([docs/benchmarks.md](docs/benchmarks.md))"),
}


def _operations_of(group: str) -> Callable[[Any], None]:
    return lambda sub: _operations(sub, group)


# The commands in the order help lists them; a command of operations not named here comes
# after these (`_parser_for`).
_BUILDERS: dict[str, Callable[[Any], None]] = {
    "init": _init_parser,
    "demo": _demo_parser,
    "hot": _operations_of("hot"),
    "search": _operations_of("search"),
    "reindex": _operations_of("reindex"),
    "merge-file": _merge_file_parser,
    "stats": _operations_of("stats"),
    "report": _operations_of("report"),
    "doctor": _operations_of("doctor"),
    "scribe": _operations_of("scribe"),
    "decision": _operations_of("decision"),
    "wiki": _operations_of("wiki"),
    "spawn": _operations_of("spawn"),
    "log": _operations_of("log"),
    "forget": _operations_of("forget"),
    "import": _operations_of("import"),
    "squad": _squad_parsers,
    "serve": _serve_parser,
    "bench": _bench_parsers,
}


def _commands() -> dict[str, Callable[[Any], None]]:
    """Every command's builder: `_BUILDERS`, then each other command of operations."""
    from ..operations import OPERATIONS

    more = [op.command[0] for op in OPERATIONS if op.command and op.command[0] not in _BUILDERS]
    return _BUILDERS | {group: _operations_of(group) for group in more}


def _words_in(argv: Sequence[str]) -> list[str]:
    """The words of an argument list that are not options (its command, the command's
    action...), found without parsing it."""
    words: list[str] = []
    takes_value = False
    for token in argv:
        if takes_value:
            takes_value = False
        elif token.startswith("--") and "=" not in token and len(token) > 2:
            # argparse accepts any unambiguous prefix of an option, like --ro for --root
            takes_value = "--root".startswith(token) or "--now".startswith(token)
        elif not token.startswith("-"):
            words.append(token)
    return words


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line; given the arguments, only what they run is built.

    Building all forty-odd parsers took about a fifth of a `hot show`'s start-up, so a
    command line that names its command and action gets those alone (a word that names
    neither, or none, gets the whole tree, so that help and errors list every choice).
    """
    wanted = [] if argv is None else _words_in(argv)
    parser = _parser_for(wanted)
    return _parser_for([]) if wanted and parser.unmatched() else parser


def _parser_for(wanted: Sequence[str]) -> _Parser:
    parser = _Parser(
        prog="tiermem",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.wanted = wanted
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print the version")
    _common(parser)
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_Parser
    )
    for build in _commands().values():
        build(sub)
    return parser


def reference() -> list[str]:
    """The README's command table, row by row: each command's synopsis as its parser takes
    it, and what it does (`_ABOUT`). `scripts/readme_commands` writes it into the README."""
    rows = ["| command | what it does |", "|---|---|"]
    for name, command in _subcommands(build_parser()).items():
        synopsis = _synopsis(command).replace("|", "\\|")
        about = _ABOUT.get(name, command.description or "")
        rows.append(f"| `{synopsis}` | {about.replace('|', chr(92) + '|')} |")
    return rows


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _synopsis(parser: argparse.ArgumentParser) -> str:
    """A command's usage on one line, without the options every command takes; a command
    with one action is shown as that action, one with several lists them."""
    actions = _subcommands(parser)
    if len(actions) == 1:
        return _synopsis(next(iter(actions.values())))
    if actions:
        return f"{parser.prog} {'|'.join(actions)} ..."
    wide = argparse.HelpFormatter(parser.prog, width=10_000)
    wide.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    usage = wide.format_help().strip()
    for common in (" [-h]", " [--root DIR]", " [--now ISO-8601]"):
        usage = usage.replace(common, "")
    return usage


class _VersionAction(argparse.Action):
    """--version: the package metadata is only read when asked for (it is slow to import)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"tiermem {_version()}")
        parser.exit(0)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tiermem")
    except PackageNotFoundError:
        return "0+unknown"
