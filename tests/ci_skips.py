"""A pytest plugin: under CI, a test that needs what CI installs may not skip.

CI installs the real Squad CLI (`.ci/install-squad`) and Chromium (`.ci/install-chromium`)
before the test command; the tests that need them carry `pytest.mark.ci_installs(WHAT)`.
Outside CI they skip, with their reason printed (`-rs`), where those are missing. Under CI
(`CI` set to anything but empty, `0` or `false`), such a skip is turned into a failure, so a
broken install can never pass as a green run with tests quietly left out.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

MARK = "ci_installs"


def under_ci() -> bool:
    """Whether this run is CI's, as CI services say it (`CI=true`)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARK}(what): needs what CI installs; under CI a skip of it fails the run",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    mark = item.get_closest_marker(MARK)
    if report.skipped and mark is not None and under_ci() and not hasattr(report, "wasxfail"):
        what = ", ".join(str(a) for a in mark.args) or "what it needs"
        report.outcome = "failed"
        report.longrepr = f"CI installs {what} for this test, yet it skipped: {_reason(report)}"
    return report


def _reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)
