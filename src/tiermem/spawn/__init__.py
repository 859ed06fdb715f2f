"""The spawn: the prompt assembled within its budget (`assemble`, `prompt`), a task too long for
it cut (`task`), its exact token counts kept by text (`counts`) and the log of every spawn
(`log`). It may import `team/`, `hot/`, the Context, `options`, `relevance/` and everything
below them.
"""
