"""Progress display: every item still goes through, and stdout gets nothing."""

from __future__ import annotations

import pytest

from tiermem.render.progress import track, working


def test_track_yields_every_item_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    items = [f"file {n}" for n in range(25)]
    assert list(track(items, "importing", enabled=True)) == items
    assert track(items, "importing", enabled=False) is items
    assert list(track([], "importing")) == []
    assert capsys.readouterr().out == ""


def test_working_wraps_the_work(capsys: pytest.CaptureFixture[str]) -> None:
    done = []
    for enabled in (True, False):
        with working("indexing", enabled=enabled):
            done.append(enabled)
    assert done == [True, False]
    assert capsys.readouterr().out == ""
