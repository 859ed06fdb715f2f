"""`tiermem demo`: a small team's week, run through every tier, explained as it goes."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .memory import Memory

# A lead and a tester over three days. Times are fixed so the demo prints the same thing
# on every machine.
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
                "switched to `vi.useFakeTimers()`. Pattern: always fake timers in CLI tests.",
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
                "Published v0.9.0; install failed: file: refs in packages/squad-cli/package.json",
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


def _say(text: str) -> None:
    print(text)


def _day(root: Path, now: str, steps: list[tuple[str, str, str, str]]) -> None:
    mem = Memory(root, now=now)
    agents: list[str] = []
    for agent, verb, text, why in steps:
        if verb == "set":
            mem.hot_set(agent, text, why or None)
        else:
            slot = {"action": "action", "decide": "decision", "block": "blocker", "note": "note"}[
                verb
            ]
            mem.hot_add(agent, slot, text)
        if agent not in agents:
            agents.append(agent)
    _say(f"\n== {now[:10]}: {len(steps)} hot writes by {', '.join(agents)}")
    _say(mem.hot_view("lead").markdown)

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
        _, created = Memory.init(scratch, now=_DAYS[0][0])
        _say(f"tiermem demo in {scratch}: created {', '.join(created[:5])} ...")
        for now, steps in _DAYS:
            _day(scratch, now, steps)
        _finish(scratch)
    finally:
        if not keep and not root:
            shutil.rmtree(scratch, ignore_errors=True)
        elif keep:
            _say(f"\nstore kept in {scratch}")
    return 0


def _finish(root: Path) -> None:
    mem = Memory(root, now="2026-03-12T09:00:00Z")
    entry = mem.wiki_write(
        "testing",
        "# Fake timers in CLI tests\nAlways use "
        "`vi.useFakeTimers()` in CLI tests; real timers made nap.test.ts flaky.",
        by="tester",
    )
    _say(f"\n== tester asked Scribe for a wiki entry: {entry.id} on {entry.path} ({entry.cls})")
    report = mem.scribe_run()
    _say("\n== 2026-03-12: Scribe maintenance")
    for line in report.lines():
        _say(f"  {line}")
    _say("\n== search 'npm install file: refs'")
    for hit in mem.search("npm install file refs", limit=3):
        _say(f"  {hit.score:5.2f} {hit.tier:<7} {hit.id}  {hit.title[:70]}")
    result = mem.spawn("lead", "Fix the broken npm install again", auto=True)
    _say(f"\n== spawn lead --auto: situation '{result.situation}' ({result.reason})")
    _say(
        f"   tiers {result.tiers}, {result.tokens['total']} tokens, sources "
        f"{[s.id for s in result.sources]}"
    )
    _say("\n" + result.prompt)
    mem.close()
