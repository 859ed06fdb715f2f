"""The `tiermem` command line's parsers: argparse's, built only for the command a line runs.

`main` reads the commands users run most without them (`plain`); every other line, and every
line that asks for help or holds a mistake, is parsed here, so help and errors are argparse's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from .handlers import (
    _one_line,
    cmd_bench,
    cmd_decision,
    cmd_demo,
    cmd_doctor,
    cmd_forget,
    cmd_hot,
    cmd_import,
    cmd_init,
    cmd_log,
    cmd_merge_file,
    cmd_reindex,
    cmd_report,
    cmd_scribe,
    cmd_search,
    cmd_serve,
    cmd_spawn,
    cmd_squad,
    cmd_stats,
    cmd_wiki,
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
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")

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


def _new_agent(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--new-agent",
        action="store_true",
        help="AGENT is new to the team (without it, a name that Squad does not list and that "
        "has no memory is refused as a likely typo)",
    )


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


def _hot_parsers(sub: Any) -> None:
    hot = _add(sub, "hot", cmd_hot, _HELP["hot"], **_examples(_HOT_EPILOG))
    verbs = hot.add_subparsers(
        dest="hot_action", metavar="ACTION", required=True, parser_class=_Parser
    )
    s = _add(verbs, "set", cmd_hot, "set the current task (replaces the previous task)")
    s.add_argument("agent", metavar="AGENT")
    s.add_argument("--task", required=True, help="what the agent is doing ('-' reads stdin)")
    s.add_argument("--why", help="why it matters")
    s.add_argument("--talking-to", metavar="NAME", help="who the agent works with")
    _new_agent(s)
    for verb, text in (
        ("action", "record something the agent did (only the last 5 stay)"),
        ("decide", "record a decision made in this session"),
        ("block", "record a blocker (carried into the next session)"),
        ("unblock", "resolve a blocker matched by id or text"),
        ("note", "record a session note"),
    ):
        p = _add(verbs, verb, cmd_hot, text)
        p.add_argument("agent", metavar="AGENT")
        p.add_argument("text", metavar="TEXT", help="the text ('-' reads stdin)")
        if verb != "unblock":
            _new_agent(p)
            p.add_argument(
                "--source",
                choices=("agent", "user", "tool", "web"),
                default="agent",
                help="where the text came from; tool output and web text are kept as untrusted "
                "data and never promoted to the wiki (default: agent)",
            )
    show = _add(verbs, "show", cmd_hot, "print an agent's hot tier")
    show.add_argument("agent", metavar="AGENT")
    _format(show)
    clear = _add(verbs, "clear", cmd_hot, "empty the hot tier (its text is archived first)")
    clear.add_argument("agent", metavar="AGENT")


_SCRIBE_EPILOG = """examples:
  tiermem scribe end-session flight     # hot -> a dated cold summary; blockers carried
  tiermem scribe end-session --all
  tiermem scribe run --dry-run          # what maintenance would do, writing nothing
  tiermem scribe run                    # then commit .squad/memory/ with the team
"""


def _scribe_parsers(sub: Any) -> None:
    scribe = _add(sub, "scribe", cmd_scribe, _HELP["scribe"], **_examples(_SCRIBE_EPILOG))
    verbs = scribe.add_subparsers(
        dest="scribe_action", metavar="ACTION", required=True, parser_class=_Parser
    )
    end = _add(verbs, "end-session", cmd_scribe, "compress hot into a dated cold entry; reset hot")
    end.add_argument("agent", nargs="?", metavar="AGENT")
    end.add_argument("--all", action="store_true", help="end the session of every agent")
    _format(end)
    run = _add(
        verbs,
        "run",
        cmd_scribe,
        "maintenance: inbox merge, checkpoints, supersede, promote to wiki, expire, use",
    )
    run.add_argument(
        "--dry-run", action="store_true", help="report what would change; write nothing"
    )
    _format(run)


def _wiki_parsers(sub: Any) -> None:
    wiki = _add(sub, "wiki", cmd_wiki, _HELP["wiki"])
    verbs = wiki.add_subparsers(
        dest="wiki_action", metavar="ACTION", required=True, parser_class=_Parser
    )
    write = _add(verbs, "write", cmd_wiki, "ask Scribe for a wiki entry on a topic")
    write.add_argument("topic", metavar="TOPIC")
    write.add_argument(
        "text", metavar="TEXT", help="the entry ('-' reads stdin); first line is its title"
    )
    write.add_argument("--by", metavar="AGENT", help="who asks")
    _new_agent(write)
    lst = _add(verbs, "list", cmd_wiki, "list wiki pages")
    _format(lst)
    show = _add(verbs, "show", cmd_wiki, "print a wiki page")
    show.add_argument("topic", metavar="TOPIC")


_SPAWN_EPILOG = """examples:
  tiermem spawn flight --task "Publish v0.9.2 to npm" --auto
  tiermem spawn flight --task "Review the release ADR" --include-wiki release --budget 3000
  tiermem spawn flight --task - --auto --format json < task.md   # the prompt and its sources
"""


def _spawn_parser(sub: Any) -> None:
    p = _add(sub, "spawn", cmd_spawn, _HELP["spawn"], **_examples(_SPAWN_EPILOG))
    if isinstance(p, _Skipped):
        return  # the request's fields are not read for another command
    from ..options import SpawnRequest

    mode = p.add_mutually_exclusive_group()
    add_flags(p, SpawnRequest, into={"refs": mode})
    mode.add_argument("--inline", action="store_true", help="inline cold and wiki text (default)")
    p.add_argument(
        "--format",
        choices=("markdown", "json"),
        default="markdown",
        help="output format (default: markdown)",
    )


def add_flags(parser: Any, request: type, into: dict[str, Any] | None = None) -> None:
    """The flags of a request's fields (`options`), each added to the parser or to the group
    `into` names for it."""
    from ..options import REQUIRED, options_of

    # As written ("bool", "int | None"...), read as `inspect.get_annotations` reads a class's
    # own: inspect brings ast, dis and tokenize, which a spawn otherwise never loads.
    hints = dict(request.__dict__.get("__annotations__", {}))  # noqa: RUF063
    for name, item, default in options_of(request):
        how: dict[str, Any] = {"help": _flag_help(item), "metavar": item.metavar}
        target = (into or {}).get(name, parser)
        if item.cli == "positional":
            target.add_argument(name, **how)
            continue
        flag = "--" + name.replace("_", "-")
        if hints[name] == "bool":
            target.add_argument(flag, action="store_true", help=how["help"])
        else:
            how.update(_FLAG_KINDS[item.cli], required=default is REQUIRED)
            how.update(type=int) if hints[name].startswith("int") else None
            target.add_argument(flag, **how)


# How argparse takes each kind of flag (`options.Option.cli`).
_FLAG_KINDS: dict[str, dict[str, Any]] = {
    "flag": {},
    "repeat": {"action": "append"},
    "words": {"nargs": "*"},
}


def _flag_help(item: Any) -> str:
    from ..options import described

    return described(item) + (" ('-' reads stdin)" if item.stdin else "")


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


def _decision_parsers(sub: Any) -> None:
    decision = _add(sub, "decision", cmd_decision, _HELP["decision"])
    verbs = decision.add_subparsers(
        dest="decision_action", metavar="ACTION", required=True, parser_class=_Parser
    )
    add = _add(verbs, "add", cmd_decision, "record a team decision (also in .squad/decisions.md)")
    add.add_argument("--by", required=True, metavar="AGENT", help="who decided")
    add.add_argument("text", metavar="TEXT", help="the decision ('-' reads stdin)")
    _new_agent(add)


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


def _one_action(
    sub: Any, command: tuple[str, str, str], action: tuple[str, str], handler: Handler, epilog: str
) -> Any:
    """The parser of a command's one action (`import squad`, `squad install`): `command` is
    its name, the attribute its action is parsed into and that attribute's metavar."""
    name, dest, metavar = command
    parent = _add(sub, name, handler, _HELP[name])
    actions = parent.add_subparsers(dest=dest, metavar=metavar, required=True, parser_class=_Parser)
    return _add(actions, action[0], handler, action[1], **_examples(epilog))


def _import_parsers(sub: Any) -> None:
    squad = _one_action(
        sub,
        ("import", "import_source", "SOURCE"),
        ("squad", "import .squad/ histories and decisions into tiers"),
        cmd_import,
        _IMPORT_EPILOG,
    )
    squad.add_argument(
        "--dry-run",
        action="store_true",
        help="run the import on a scratch copy and print where entries would land; write nothing",
    )
    _format(squad)


_SQUAD_INSTALL_EPILOG = """\
writes: .mcp.json (and .vscode/mcp.json where .vscode/ exists; a JSONC file keeps its
  comments): a `tiermem` server beside Squad's own; .squad/memory/: the tiermem store;
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
--check, `kept` by --uninstall). What it replaced is marked in place or kept in
.squad/memory/tiermem-install.json for --uninstall, which puts back Squad's bytes. A second
install changes nothing. No path is read or written through a symbolic link, and an install
record that names anything an install does not write is refused.
exit status: 0 done; 1 (--check) something is missing, outdated or undone (`squad upgrade`
rewrites .squad/templates/ and .github/agents/squad.agent.md: each line it undid is named);
2 bad input or a refused repository (a link, a state backend other than local, a team kept
elsewhere, an install record tiermem did not write as it writes them), and nothing was
written.
"""


def _squad_parsers(sub: Any) -> None:
    install = _one_action(
        sub,
        ("squad", "squad_action", "ACTION"),
        ("install", "wire tiermem into this Squad team: MCP server, charters, skill, spawn step"),
        cmd_squad,
        _SQUAD_INSTALL_EPILOG,
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
        help="take out everything the install put in; Squad's files come back as Squad wrote them",
    )
    _format(install)


def _report_parser(sub: Any) -> None:
    report = _add(sub, "report", cmd_report, _HELP["report"])
    report.add_argument(
        "--out",
        metavar="DIR",
        help="folder for report.html (default: .squad/memory/local/report, git-ignored)",
    )
    report.add_argument("--open", action="store_true", help="open the page in a browser")
    report.add_argument(
        "--task", metavar="T", help="preview the spawn of --agent on this task ('-' reads stdin)"
    )
    report.add_argument("--agent", metavar="A", help="the agent of the spawn preview")
    _format(report)


def _forget_parser(sub: Any) -> None:
    forget = _add(sub, "forget", cmd_forget, _HELP["forget"])
    forget.add_argument("id", metavar="ID", help="an entry id, as search and spawn list them")
    forget.add_argument("--reason", metavar="TEXT", help="why (kept in the audit trail)")
    forget.add_argument(
        "--purge",
        action="store_true",
        help="delete the text from the archive and the index too (a leaked credential); "
        "leaves an audited tombstone",
    )
    _format(forget)


def _log_parser(sub: Any) -> None:
    log = _add(sub, "log", cmd_log, _HELP["log"])
    log.add_argument("--agent", metavar="AGENT", help="only spawns of this agent")
    log.add_argument(
        "--entry", metavar="ID", help="only spawns that loaded this entry (or one of its parts)"
    )
    log.add_argument("--limit", type=int, default=50, metavar="N", help="spawns (default 50)")
    _format(log)


_SEARCH_EPILOG = """examples:
  tiermem search "npm publish file: refs"
  tiermem search "token refresh" --agent flight --limit 5
  tiermem search "release tag" --tier wiki --format json
  tiermem search '"retry budget" parser'                   # a quoted run of words as a phrase
  tiermem search c-6f342dcc23 a-c832f390f7-5e01d2b9aa#2      # read entries by the ids search gives
"""


def _search_parser(sub: Any) -> None:
    search = _add(sub, "search", cmd_search, _HELP["search"], **_examples(_SEARCH_EPILOG))
    search.add_argument(
        "query",
        metavar="QUERY",
        nargs="+",
        help='words to look for (any may match; a "quoted run" matches as a phrase), or entry '
        "ids to read those entries (several words or ids need no quotes; `-` reads stdin)",
    )
    search.add_argument(
        "--agent", metavar="AGENT", help="this agent's memory, the team's and the wiki"
    )
    search.add_argument("--tier", choices=("hot", "cold", "wiki", "archive"), help="only this tier")
    search.add_argument("--limit", type=int, default=10, metavar="K", help="results (default 10)")
    _format(search)


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


def _reindex_parser(sub: Any) -> None:
    reindex = _add(sub, "reindex", cmd_reindex, _HELP["reindex"])
    reindex.add_argument("--check", action="store_true", help="only report drift (exit 1 if any)")


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


def _doctor_parser(sub: Any) -> None:
    doctor = _add(
        sub,
        "doctor",
        cmd_doctor,
        _HELP["doctor"],
        epilog=_DOCTOR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    doctor.add_argument("--repair", action="store_true", help="repair what is safe to repair")
    _format(doctor)


def _stats_parser(sub: Any) -> None:
    _format(_add(sub, "stats", cmd_stats, _HELP["stats"]))


def _serve_parser(sub: Any) -> None:
    _add(sub, "serve", cmd_serve, _HELP["serve"])


_HELP = {
    "init": "create .squad/memory/ with its tiers, config and git settings",
    "demo": "run a built-in example team in a scratch folder and explain it",
    "hot": "read and write an agent's hot tier (the current session)",
    "search": "search every tier and the archive (BM25)",
    "reindex": "rebuild the search index from the files",
    "merge-file": "git merge driver: merge three versions of a tier file entry by entry",
    "stats": "entries, bytes and tokens per agent and tier",
    "report": "write one HTML page of the store: agents, budgets, Scribe, wiki, stale, entries",
    "doctor": "check a store after a merge or a crash, and repair what is safe",
    "scribe": "run the memory keeper",
    "decision": "record team decisions",
    "wiki": "the team wiki: durable knowledge by topic",
    "spawn": "render the prompt for spawning an agent on a task",
    "log": "which spawns got an entry, and what each spawn got (this clone's log)",
    "forget": "retire an entry from every tier (its text stays in the archive; --purge deletes)",
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
        "`.squad/memory/local/report/`, git-ignored): agents against their budgets, Squad's "
        "spawn load against tiermem's, Scribe's history, the wiki by topic, stale and "
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
        "first: which files, how many lines), checkpoints, supersede, promote, expire, cold "
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
        "adopt tiermem in a Squad team: the MCP server in `.mcp.json`, a memory section in "
        "every charter, the `tiered-memory` skill, and with `--coordinator` every instruction "
        "of Squad's that loads a whole history or decision log (the spawn template's, the "
        "coordinator's, @copilot's, the templates', each charter's) replaced by the tiermem "
        "step, sealed; install and `--uninstall` change only what they wrote; Squad 0.10 and "
        "earlier layouts, `teamRoot` `.`, JSONC editor files "
        "([docs/squad.md](docs/squad.md))"
    ),
    "serve": ("the MCP server over stdio ([docs/mcp.md](docs/mcp.md))"),
    "bench": ("the benchmarks ([docs/benchmarks.md](docs/benchmarks.md))"),
}


_BUILDERS: dict[str, Callable[[Any], None]] = {
    "init": _init_parser,
    "demo": _demo_parser,
    "hot": _hot_parsers,
    "search": _search_parser,
    "reindex": _reindex_parser,
    "merge-file": _merge_file_parser,
    "stats": _stats_parser,
    "report": _report_parser,
    "doctor": _doctor_parser,
    "scribe": _scribe_parsers,
    "decision": _decision_parsers,
    "wiki": _wiki_parsers,
    "spawn": _spawn_parser,
    "log": _log_parser,
    "forget": _forget_parser,
    "import": _import_parsers,
    "squad": _squad_parsers,
    "serve": _serve_parser,
    "bench": _bench_parsers,
}


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
    for build in _BUILDERS.values():
        build(sub)
    return parser


def reference() -> list[str]:
    """The README's command table, row by row: each command's synopsis as its parser takes
    it, and what it does (`_ABOUT`). `scripts/readme_commands` writes it into the README."""
    rows = ["| command | what it does |", "|---|---|"]
    for name, command in _subcommands(build_parser()).items():
        synopsis = _synopsis(command).replace("|", "\\|")
        rows.append(f"| `{synopsis}` | {_ABOUT[name].replace('|', chr(92) + '|')} |")
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
