"""A task too long for its spawn: cut to a share of the budget, so that memory keeps its room.

One budget bounds the whole prompt, the task included: a task pasted whole from a long
issue or a log (120 KB) would leave no room for any memory, and the agent would get none
without a word. A task over half the budget is cut at a line, sentence or word, the prompt
says where and how much was left out (the coordinator holds it whole), and so does a note.
"""

from __future__ import annotations

from ..context import Context

# The most of a spawn's budget the task may take.
TASK_SHARE = 0.5
_BREAKS = ("\n", ". ", " ")


def fitted(ctx: Context, task: str, budget: int) -> str:
    """The task as the prompt holds it: whole, or cut to TASK_SHARE of the budget."""
    room = int(budget * TASK_SHARE)
    # No text has more tokens than bytes (a token is at least one byte): a task no longer in
    # bytes than the room fits, uncounted (counting would load the encoding for it alone).
    if budget <= 0 or len(task.encode("utf-8")) <= room:
        return task
    [total] = ctx.tokens.count_many([task])
    if total <= room:
        return task
    cut, kept = _first(ctx, task, total, room)
    ctx.note(
        f"the task is {total:,} tokens, over half the spawn's budget of {budget:,}: the "
        f"prompt holds its first {kept:,} tokens and says so, so that memory keeps its room"
    )
    said = f"its first {kept:,} of {total:,} tokens; the coordinator has it whole"
    return f"{cut}\n\n[The task is cut here: {said}.]"


def _first(ctx: Context, task: str, total: int, room: int) -> tuple[str, int]:
    """The longest start of the task, ended at a break, that fits `room` with the note
    saying it was cut; and its tokens."""
    room -= 40  # the line saying where the task was cut
    size = max(1, len(task) * room // total)
    while True:
        cut = _at_break(task[:size])
        [kept] = ctx.tokens.count_many([cut])
        if kept <= room or size <= 1:
            return cut, kept
        size = max(1, size * room // (kept + 1))


def _at_break(text: str) -> str:
    """The text up to its last line end, else sentence end, else word (whole when none)."""
    for mark in _BREAKS:
        at = text.rfind(mark)
        if at > len(text) // 2:
            return text[: at + len(mark)].rstrip()
    return text.rstrip()
