"""`tiermem demo`: a small team's week, run through every tier, explained as it goes."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..memory import Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..vocabulary import HotKind

# A Squad team of two: tiermem knows its agents from their folders under .squad/agents/.
_CHARTERS = {
    "lead": "# Lead\nOwns releases and the CLI; reviews every pull request.\n",
    "tester": "# Tester\nOwns the test suites; keeps CI green.\n",
}

# A lead and a tester over two days. Times are fixed so the demo prints the same thing on
# every machine.
_DAYS = [
    (
        "2026-03-02T09:00:00Z",
        [
            ("lead", "set", "Ship the v0.9 release of the CLI", "Users asked for `squad nap`"),
            ("lead", "action", "Reviewed PR #412: adds `squad nap` to src/cli/index.ts", ""),
            (
                "lead",
                "decide",
                "Release branches are cut from dev every Monday; main only takes release merges",
                "",
            ),
            ("tester", "set", "Cover `squad nap` with end-to-end tests", "It ships in v0.9"),
            (
                "tester",
                "note",
                "### Flaky timer in nap.test.ts\nThe test used real timers; "
                "switched to `vi.useFakeTimers()`. Pattern: fake timers in CLI tests.",
                "",
            ),
            ("tester", "block", "CI runner image lacks Node 20", ""),
        ],
    ),
    (
        "2026-03-03T09:00:00Z",
        [
            ("lead", "set", "Publish v0.9.0 to npm", "Release day"),
            (
                "lead",
                "action",
                "Published v0.9.0; npm install failed: file: refs in packages/squad-cli/"
                "package.json",
                "",
            ),
            (
                "lead",
                "decide",
                "Pin squad-sdk to an exact version in squad-cli (no file: refs)",
                "",
            ),
            ("lead", "action", "Published v0.9.1 with the pinned dependency; installs work", ""),
        ],
    ),
]

# What the lead asks Scribe to keep for the whole team after the broken release.
_POLICY = (
    "# Publishing to npm\nNever publish with file: refs: pin squad-sdk to an exact version in "
    "squad-cli, and run npm pack and a clean npm install before every npm publish."
)

# The hot slot each verb of `tiermem hot` writes (as its command line spells them).
_SLOTS: dict[str, HotKind] = {
    "action": "action",
    "decide": "decision",
    "block": "blocker",
    "note": "note",
}

def _say(text: str) -> None:
    print(text)


def _team(root: Path) -> None:
    for agent, charter in _CHARTERS.items():
        folder = root / ".squad" / "agents" / agent
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "charter.md").write_text(charter, encoding="utf-8")


def _day(root: Path, now: str, steps: list[tuple[str, str, str, str]]) -> None:
    mem = Memory(root, now=now)
    agents: list[str] = []
    for agent, verb, text, why in steps:
        if verb == "set":
            mem.hot_set(agent, text, why or None)
        else:
            mem.hot_add(agent, _SLOTS[verb], text)
        if agent not in agents:
            agents.append(agent)
    _say(f"\n== {now[:10]}: {len(steps)} hot writes by {', '.join(agents)}")
    _say(
        "Each agent keeps its current session in its hot tier (task, why, decisions, last "
        "actions, blockers, notes), loaded whole into its next spawn. The lead's:"
    )
    _say(mem.hot_view("lead").markdown)
    _say(
        "At session end Scribe archives the raw text, writes one dated cold summary, sends "
        "decisions to the team and carries open blockers into the next session:"
    )
    for agent in agents:
        report = mem.end_session(agent)
        _say(
            f"Scribe: {agent}'s session -> cold {', '.join(report.cold)} "
            f"({report.raw_bytes} bytes -> {report.summary_bytes}); "
            f"{len(report.decisions)} decision(s) recorded; "
            f"{len(report.carried)} blocker(s) carried"
        )
    mem.close()


def run(root: str | None = None, keep: bool = False) -> int:
    """Run the demo in a scratch folder (or `root`), print each step, clean up unless kept."""
    scratch = Path(root) if root else Path(tempfile.mkdtemp(prefix="tiermem-demo-"))
    try:
        _team(scratch)
        _, created = Memory.init(scratch, now=_DAYS[0][0])
        _say(f"tiermem demo in {scratch}: created {', '.join(created[:5])} ...")
        _say(
            "A Squad team of two (.squad/agents/lead/ and tester/) gets a tiered memory: hot "
            "(this session), cold (past sessions), wiki (team knowledge) and a lossless archive."
        )
        for now, steps in _DAYS:
            _day(scratch, now, steps)
        _finish(scratch)
    finally:
        if not keep and not root:
            shutil.rmtree(scratch, ignore_errors=True)
        elif keep:
            _say(f"\nstore kept in {scratch}")
    _next(scratch if keep or root else None)
    return 0


def _finish(root: Path) -> None:
    mem = Memory(root, now="2026-03-12T09:00:00Z")
    entry = mem.wiki_write("release", _POLICY, by="lead")
    _say(f"\n== lead asked Scribe for a wiki entry: {entry.id} on {entry.path} ({entry.cls})")
    _say("An explicit request is written at once; a policy never expires.")
    report = mem.scribe_run()
    _say("\n== 2026-03-12: Scribe maintenance")
    _say(
        "Nine days on, Scribe promotes stable decisions and conventions to the wiki, marks "
        "superseded ones, and archives cold entries unused for 30 days:"
    )
    for line in report.lines():
        _say(f"  {line}")
    _say("\n== search 'npm install file: refs'")
    _say("Search ranks every tier and the archive together (BM25); each result is whole:")
    for hit in mem.search("npm install file refs", limit=3):
        _say(f"  {hit.score:5.2f} {hit.tier:<7} {hit.id}  {hit.title[:70]}")
    result = mem.spawn("lead", "Fix the broken npm install again", auto=True)
    _say(f"\n== spawn lead --auto: situation '{result.situation}' ({result.reason})")
    _say(
        "The spawn prompt loads hot, the policies that apply and the past sessions this task "
        "needs, within a token budget, fenced as data:"
    )
    _say(
        f"   tiers {result.tiers}, {result.tokens['total']} tokens, sources "
        f"{[s.id for s in result.sources]}"
    )
    _say("\n" + result.prompt)
    mem.close()


def _next(kept: Path | None) -> None:
    where = f"cd {kept} && " if kept else "tiermem demo --keep, then in the folder it prints: "
    _say("What to try next:")
    for line in (
        f"  {where}tiermem hot show lead; tiermem search 'file: refs'; tiermem stats",
        "  tiermem spawn tester --task 'Fix the flaky nap test again' --auto",
        "  in your own repository: tiermem init (or, with a .squad/ team: tiermem import squad "
        "--dry-run, then tiermem import squad)",
        "  tiermem serve: the same memory for agents over MCP (docs/mcp.md)",
    ):
        _say(line)
