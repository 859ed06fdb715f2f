"""Progress shown on long work (imports, replays, probe runs).

Drawn on stderr, beside the warnings: what a command prints on stdout (tables, JSON) stays
clean when it is piped or redirected, and rich draws nothing when stderr is no terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TypeVar

T = TypeVar("T")


def track(items: Sequence[T], label: str, enabled: bool = True) -> Iterable[T]:
    """The items, with a progress bar while they are worked through (gone when done)."""
    if not enabled or not items:
        return items
    from rich.console import Console
    from rich.progress import track as rich_track

    return rich_track(items, description=label, transient=True, console=Console(stderr=True))


def working(label: str, enabled: bool = True) -> AbstractContextManager[object]:
    """A spinner for work whose length is not known in steps."""
    if not enabled:
        return nullcontext()
    from rich.console import Console

    return Console(stderr=True).status(label, spinner="dots")


@contextmanager
def bar(total: int, label: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A progress bar over `total` units (the bytes of an import), advanced by the function
    it gives with each amount done; gone when done."""
    if not enabled or total <= 0:
        yield lambda amount: None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as shown:
        task = shown.add_task(label, total=total)
        yield lambda amount: shown.advance(task, amount)
