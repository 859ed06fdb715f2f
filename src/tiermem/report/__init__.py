"""`tiermem report`: one self-contained HTML page of a store, made from what the steps return
(`html_page`) and its Jinja template (`report.html.j2`), with Scribe's work over time drawn
from the audit trail (`trail`). It may import `upkeep/`, `scribe/`, `spawn/`, `team/` and
everything below them, never Squad or a front.
"""
