"""Following Squad's files: what the team wrote since the last import comes in at each
`scribe run`, as `import squad` would bring it.

A Squad team keeps working the Squad way after an import: agents append to their
histories (the coordinator's spawn template still says so), Scribe appends cross-agent
updates and merges decisions, `squad nap` moves old sections to `history-archive.md`. Once
a team's `.squad/` was imported, `scribe run` imports again the files that changed since
(each archived byte for byte, as every import does), section by section: an unchanged
section is untouched, a new one is added, and one that grew replaces its earlier import,
whose text is archived (`team.sections`). A store that never imported follows nothing.

Telling a changed file costs its bytes' digest: this clone keeps the digest of each file
whose import finished (`tiermem-local/imported`, never committed), so a run over files the
team did not touch reads them and stops. A clone without the record checks each file once
as the import does (its text's archive record), then has it.
"""

from __future__ import annotations

from ...context import Context
from ...host import FollowReport
from . import imported_files
from .import_sources import Source
from .squad_import import completed_records, plan, write


def follow(ctx: Context, dry_run: bool = False) -> FollowReport:
    """Import what changed in Squad's files since the last import (nothing, for a store
    that never imported a team)."""
    known = imported_files.known(ctx)
    if not known and not completed_records(ctx):
        return FollowReport()
    if dry_run:
        return FollowReport(followed=True, files=plan_only(ctx, known))
    planned = plan(ctx, only=lambda found: _changed(found, known))
    if planned.records:
        write(ctx, planned, maintain=False)
    imported_files.remember(ctx, planned.sources)
    return FollowReport(True, list(planned.changed), planned.written, list(planned.replaced))


def plan_only(ctx: Context, known: dict[str, str]) -> list[str]:
    """The files a run would import again (by their bytes: nothing is read further)."""
    from .import_sources import sources

    return [s.rel for s in _changed(sources(ctx.layout.squad), known)]


def _changed(found: list[Source], known: dict[str, str]) -> list[Source]:
    """The files whose bytes are not those this clone recorded as imported."""
    return [s for s in found if known.get(s.rel) != imported_files.of_file(s)]
