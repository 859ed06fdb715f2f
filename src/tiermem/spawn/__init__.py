"""The spawn: the prompt assembled within its budget (`assemble`, `prompt`), a task too long for
it cut (`task`) and the log of every spawn (`log`). It may import `team/`, `hot/`, the
Context, `options`, `relevance/` and everything below them.
"""
