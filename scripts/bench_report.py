"""Measure `tiermem report` on the four teams and on 10,000 entries; take the docs' screenshots.

For each team in ../shared/corpora: its `.squad/` is copied into a scratch folder and
imported (`tiermem import squad`), then `tiermem report` runs as a whole process (median of
--runs), and headless Chromium opens the page (median load time) and takes a screenshot of
its top into docs/img/report-TEAM.png. Then the speed benchmark's generated store of 10,000
entries is reported and loaded the same way. Needs Debian's chromium and the dev extra
(websockets).

    python scripts/bench_report.py [--runs 5] [--no-screenshots]
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import cdp  # noqa: E402  (the tests' DevTools client)
from tiermem.bench.generated import NOW, generate  # noqa: E402

CORPORA = HERE.parents[1] / "shared" / "corpora"
IMAGES = HERE.parent / "docs" / "img"
SHOT_WIDTH, SHOT_HEIGHT, SHOT_SCALE = 1280, 2600, 0.75


@dataclass
class Row:
    team: str
    imported: float
    report: list[float]
    page_bytes: int
    loads: list[float]

    def line(self) -> str:
        return (
            f"| {self.team} | {self.imported:.1f} s | {statistics.median(self.report):.2f} s "
            f"({max(self.report):.2f} s) | {self.page_bytes / 1e6:.1f} MB "
            f"| {statistics.median(self.loads) * 1000:.0f} ms |"
        )


def tiermem(*args: str) -> float:
    """Run `tiermem ARGS` as a whole process; its wall time in seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERMEM_")}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tiermem", *args], check=True, env=env, stdout=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def load_times(page_file: Path, runs: int) -> list[float]:
    """Seconds from navigation to the load event, in a fresh browser each run."""
    times = []
    for _ in range(runs):
        with cdp.Browser.start() as page:
            times.append(page.open(page_file.as_uri()))
    return times


def screenshot(page_file: Path, target: Path) -> None:
    """The top of the page (overview, agents, spawns, Scribe's history), at 3/4 scale."""
    with cdp.Browser.start(SHOT_WIDTH, SHOT_HEIGHT) as page:
        page.open(page_file.as_uri())
        clip = {"x": 0, "y": 0, "width": SHOT_WIDTH, "height": SHOT_HEIGHT, "scale": SHOT_SCALE}
        params = {"format": "png", "clip": clip, "captureBeyondViewport": True}
        target.write_bytes(base64.b64decode(page.call("Page.captureScreenshot", params)["data"]))


def team(corpus: Path, runs: int, shots: bool) -> Row:
    name = corpus.name.split("__")[-1]
    with tempfile.TemporaryDirectory(prefix="tiermem-report-") as folder:
        root = Path(folder) / name  # the page names its root: the team's name reads best
        shutil.copytree(corpus / ".squad", root / ".squad")
        imported = tiermem("--root", str(root), "import", "squad")
        out = root / "out"
        times = [tiermem("--root", str(root), "report", "--out", str(out)) for _ in range(runs)]
        page = out / "report.html"
        loads = load_times(page, runs)
        if shots:
            screenshot(page, IMAGES / f"report-{name}.png")
        return Row(name, imported, times, page.stat().st_size, loads)


def generated(runs: int) -> Row:
    with tempfile.TemporaryDirectory(prefix="tiermem-report-10k-") as folder:
        root = Path(folder)
        generate(root, 10_000, lambda line: print(line, file=sys.stderr))
        out = root / "out"
        times = [
            tiermem("--root", str(root), "--now", NOW, "report", "--out", str(out))
            for _ in range(runs)
        ]
        page = out / "report.html"
        loads = load_times(page, runs)
        return Row("generated, 10,000 entries", 0.0, times, page.stat().st_size, loads)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-screenshots", action="store_true")
    args = parser.parse_args()
    if cdp.binary() is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    rows = [team(c, args.runs, not args.no_screenshots) for c in sorted(CORPORA.glob("*__*"))]
    rows.append(generated(args.runs))
    print("| team | import | `tiermem report`, median (max) | page | load in Chromium, median |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
