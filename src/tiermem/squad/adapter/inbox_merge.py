"""Squad's decision inbox, merged at Scribe's maintenance run (`Host.merge_inbox`): each
file into decisions.md and the team's tier, then out of the inbox once it is in both.
Credentials go on the way, as on every write path: decisions.md gets the text redacted,
and the redaction is audited."""

from __future__ import annotations

from ...context import Context
from ...host import InboxReport
from ...storage import files, store
from ...storage.layout import TEAM
from ...team import decisions
from ..reading import squad_markdown
from . import decision_log, inbox_files

_LOG = ".squad/decisions.md"  # where the audit says a redaction went


def merge(ctx: Context, dry_run: bool = False) -> InboxReport:
    """Merge the inbox into decisions.md and the team's tier, then remove what was merged."""
    found, skipped = inbox_files.read(ctx)
    report = InboxReport(skipped=skipped)
    if not found:
        return report
    target = decision_log.path(ctx)
    team = ctx.layout.tier_file("cold", TEAM)
    store.load(ctx.layout, "cold", team)  # a damaged team file stops the merge before a write
    cleaned = [(name, *ctx.redact(text)) for name, text in found]
    with files.locked(ctx.layout, target):
        current = files.read_text(ctx.layout, target) or decision_log.EMPTY_LOG
        merged_text, report.merged = squad_markdown.merge_inbox(
            current, [(name, text) for name, text, _ in cleaned], ctx.stamp()[:10]
        )
        report.lines_added = merged_text.count("\n") - current.count("\n")
        if dry_run:
            return report
        if merged_text != current:
            files.atomic_write(target, merged_text)
    merged = set(report.merged)
    ctx.audit_redactions([k for name, _, kinds in cleaned if name in merged for k in kinds], _LOG)
    texts = dict(found)
    for name in report.merged:
        source = f".squad/decisions/inbox/{name}"
        by = name.split("-", 1)[0]
        report.recorded += decisions.record(ctx, texts[name], by=by, source=source, inbox_file=name)
        inbox_files.remove(ctx, name)
    ctx.audit(
        "inbox-merge", report.recorded, ["cold"], "Squad decision inbox merged", files=report.merged
    )
    return report
