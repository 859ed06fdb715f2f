"""The geometry of the report's charts: bars and dots placed in a box, drawn by the template.

Nothing here writes markup: each chart is a list of shapes with their coordinates, labels
and hover text, and `templates/report.html.j2` turns them into inline SVG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WIDTH = 640
HEIGHT = 140
LEFT = 44  # room for the value axis labels
BOTTOM = 22  # room for the first and last labels
TOP = 8
MAX_BAR_STEP = 48  # a few buckets get bars of a readable width, not the whole chart


@dataclass(frozen=True)
class Shape:
    """One bar (a rectangle) or dot (a circle at x, y with radius `width`)."""

    x: float
    y: float
    width: float
    height: float
    hover: str


@dataclass(frozen=True)
class Tick:
    """A label on an axis, at its position."""

    x: float
    y: float
    text: str
    anchor: str = "start"  # SVG text-anchor: start, middle or end


@dataclass
class Chart:
    """A chart in a WIDTH x HEIGHT box: its shapes, its axis labels, what it shows."""

    title: str
    kind: str  # "bars", "dots" or "hbars"
    width: int = WIDTH
    height: int = HEIGHT
    shapes: list[Shape] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    lines: list[tuple[float, float, float, float]] = field(default_factory=list)
    caption: str = ""

    @property
    def empty(self) -> bool:
        """Nothing to draw."""
        return not self.shapes


def nice_max(value: float) -> float:
    """A round number at or above the value, for the top of an axis."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return float(step * power)
    return float(10 * power)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"


def bars(title: str, points: list[tuple[str, float]], unit: str = "") -> Chart:
    """Vertical bars, one per (label, value), in order (time buckets)."""
    chart = Chart(title, "bars")
    if not points or all(v == 0 for _, v in points):
        return chart
    top = nice_max(max(v for _, v in points))
    inner_w, inner_h = WIDTH - LEFT - 4, HEIGHT - BOTTOM - TOP
    step = min(inner_w / len(points), MAX_BAR_STEP)
    for n, (label, value) in enumerate(points):
        h = inner_h * value / top
        x = LEFT + n * step + step * 0.1
        hover = f"{label}: {_number(value)}{unit}"
        chart.shapes.append(Shape(x, TOP + inner_h - h, max(step * 0.8, 1.0), h, hover))
    last_x = LEFT + len(points) * step
    _axes(chart, top, points[0][0], points[-1][0], inner_h, last_x)
    return chart


def dots(title: str, points: list[tuple[str, float]], unit: str = "") -> Chart:
    """A dot per (label, value), in order, with a dashed line at the median."""
    chart = Chart(title, "dots")
    if not points:
        return chart
    top = nice_max(max(v for _, v in points))
    inner_w, inner_h = WIDTH - LEFT - 8, HEIGHT - BOTTOM - TOP
    step = inner_w / max(len(points) - 1, 1)
    for n, (label, value) in enumerate(points):
        x = LEFT + 4 + (n * step if len(points) > 1 else inner_w / 2)
        y = TOP + inner_h - inner_h * value / top
        chart.shapes.append(Shape(x, y, 3.0, 0.0, f"{label}: {_number(value)}{unit}"))
    middle = sorted(v for _, v in points)[len(points) // 2]
    y = TOP + inner_h - inner_h * middle / top
    chart.lines.append((LEFT, y, WIDTH - 4, y))
    chart.caption = f"median {_number(middle)}{unit}"
    _axes(chart, top, points[0][0], points[-1][0], inner_h)
    return chart


def hbars(title: str, rows: list[tuple[str, float, float]], names: tuple[str, str]) -> Chart:
    """Two horizontal bars per row (label, first, second): e.g. Squad today against a spawn."""
    row_h = 26
    chart = Chart(title, "hbars", height=TOP + row_h * len(rows) + BOTTOM)
    if not rows:
        return chart
    top = nice_max(max(max(a, b) for _, a, b in rows))
    label_w, inner_w = 120, WIDTH - 120 - 60
    for n, (label, first, second) in enumerate(rows):
        y = TOP + n * row_h
        chart.ticks.append(Tick(label_w - 6, y + 14, label, "end"))
        for k, (value, name) in enumerate(((first, names[0]), (second, names[1]))):
            w = inner_w * value / top
            hover = f"{label}, {name}: {_number(value)} tokens"
            chart.shapes.append(Shape(label_w, y + 2 + k * 11, max(w, 1.0), 10, hover))
            chart.ticks.append(Tick(label_w + max(w, 1.0) + 4, y + 11 + k * 11, _number(value)))
    return chart


def _axes(
    chart: Chart, top: float, first: str, last: str, inner_h: float, right: float = WIDTH - 4
) -> None:
    chart.ticks += [
        Tick(LEFT - 6, TOP + 8, _number(top), "end"),
        Tick(LEFT - 6, TOP + inner_h, "0", "end"),
        Tick(LEFT, HEIGHT - 6, first),
    ]
    if last != first:
        chart.ticks.append(Tick(max(right, LEFT + 150), HEIGHT - 6, last, "end"))
    chart.lines.append((LEFT, TOP + inner_h, WIDTH - 4, TOP + inner_h))
