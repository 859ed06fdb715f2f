"""Deterministic classification of memory text into entry classes.

The rules, in the order they are tried (the first that matches wins):

0. A title that says what kind of record it is decides first. Scribe's own notices and logs
   ("Scribe Inbox Merge Notice", "Session Log: ...") are ``status``; a heading that names a
   decision, a review, an ADR or a directive, with the author or role Squad teams put
   before it ("Lead Decision — ...", "Lead Review — Issue #117 ...", "Decision: ...",
   "ADR-012: ...", "User Directive: ..."), is a ``decision`` (a directive a ``policy``),
   whatever its subject says of work done or a retrospective.
1. ``status``: team-update and session-log chatter (a heading or first line that says
   "team update", "session log", "orchestration", "status update", "standup"), a report of
   work done (a title that ends "Complete", "Implemented", "Landed", "Shipped", or says
   "Session Summary", "Recap", "Retrospective", "Deep-Dive"), or a text with no identifiers
   that is only a progress report ("done", "complete", "in progress").
2. ``learning``, for what an agent knows and learned: a title such as "Core Context",
   "Project Context", "My Domain", "Role" (its standing context, the agent's own), or one
   that names learnings, lessons or takeaways. Squad's rule: knowledge is personal.
3. ``policy``: a directive. The title names a directive/policy/rule/guardrail, or the text
   opens with an imperative rule ("Always ...", "Never ...", "Do not ...", "Must ...") or
   declares one ("... is non-negotiable", "... are mandatory"), and is short (under 1,200
   bytes).
4. ``decision``: a recorded choice: Squad's ``**What:**``/``**Why:**`` fields, a
   ``Decision:`` label or title, "decided", "we chose", "ADR", "rationale".
5. ``contract``: the shape of an interface other code relies on: titles or labels naming an
   API, contract, schema, interface, protocol, endpoint, signature, format, data model or
   architecture, or a text whose labelled fields describe files and types it defines
   ("Key file(s):", "Files:", "Interface:", "Types:").
6. ``convention``: a way of working to repeat: "pattern", "convention", "guideline",
   "best practice", "rule of thumb", "gotcha", "pitfall", "prefer ... over ...".
7. ``learning``: anything else with substance.

Structured classes (policy, decision, convention, contract) may be promoted to the wiki.
"""

from __future__ import annotations

import re

from ..storage.entries import STRUCTURED

_STATUS_TITLE = re.compile(
    r"\b(team update|session (log|summary|complete)|orchestration|status update|standup"
    r"|stand-up|daily log|check-?in|progress report)\b",
    re.IGNORECASE,
)
# A report of work done, whatever log it is in: "Phase 3 Complete", "Cursor Implementation
# Complete", "Refactor — Landed", "Session Summary", "Deep-Dive: ...".
_REPORT_TITLE = re.compile(
    r"\b(complete|completed|implemented|finished|shipped|landed|delivered)\W*(\(.*\))?\W*$"
    r"|\((already )?merged\)\W*$"
    r"|\b(session summary|status report|recap|wrap-?up|retrospective|post-?mortem|deep-?dive)\b",
    re.IGNORECASE,
)
_STATUS_ONLY = re.compile(
    r"^\W*(done|complete[d]?|in progress|started|wip|ok|ready|finished|shipped)\b",
    re.IGNORECASE,
)
_OWN_TITLE = re.compile(
    r"^\W*(core context|project context|my domain|domain|(my )?role|responsibilities|ownership"
    r"|what i own|scope of work)\W*$"
    r"|\b(learnings?|lessons?( learned)?|takeaways?)\b",
    re.IGNORECASE,
)
_POLICY_TITLE = re.compile(r"\b(directive|polic(y|ies)|rules?|guardrails?|mandate)\b", re.I)
_POLICY_OPEN = re.compile(
    r"^\W*(always|never|do not|don't|must|must not|no one may|only ever)\s|"
    r"\b(is|are) (non-negotiable|mandatory|forbidden|not allowed)\b",
    re.IGNORECASE | re.MULTILINE,
)
_DECISION = re.compile(
    r"\*\*(what|why):?\*\*|\bdecision\b|\bdecided\b|\bwe chose\b|\bchose\b|\bADR\b"
    r"|\brationale\b|\bgoing with\b|\bagreed\b",
    re.IGNORECASE,
)
_CONTRACT = re.compile(
    r"\b(API|contract|schema|interface|protocol|endpoint|signature|format|data model"
    r"|architecture|key files?|module map|wire format)\b\s*:?",
    re.IGNORECASE,
)
_CONTRACT_LABEL = re.compile(
    r"^\W*\**(key files?|files|interface|types|api|schema|contract|endpoints?|architecture)"
    r":?\**:?",
    re.IGNORECASE | re.MULTILINE,
)
_CONVENTION = re.compile(
    r"\b(pattern|conventions?|guidelines?|best practices?|rule of thumb|gotchas?|pitfalls?"
    r"|prefer\w* .{1,40} over)\b",
    re.IGNORECASE,
)
_IDENT = re.compile(r"`[^`]+`|#\d+|\w+/\w+|\w+\.\w{1,5}\b")


# Scribe's own records: what it merged, noticed or logged.
_NOTICE_TITLE = re.compile(
    r"\b(notice|inbox merge|merge (note|report|summary)|session log)\b"
    r"|\bscribe\b.*\b(log|merged?|notes?|report|summary|update|run)\b",
    re.IGNORECASE,
)
# What a heading says it records: a few words of author or role, then the kind (with a
# number, or Squad's "Record" / "Inbox" after it), then a separator or the end.
_KIND_TITLE = re.compile(
    r"^\W*(?:[\w'&./()-]+\s+){0,4}?(?P<kind>decision|review|adr|directive)s?"
    r"(?:\s+(?:record|inbox))?(?:[\s-]*#?\d+)?\s*(?::|—|–|\s-\s|\||$)",
    re.IGNORECASE,
)


def recorded_kind(title: str) -> str:
    """The class a heading gives its text by naming what it records ('' when it does not):
    `status` for Scribe's notices and logs, `policy` for a directive, `decision` for a
    decision, a review or an ADR."""
    plain = _EMPHASIS.sub("", title).strip()
    if _NOTICE_TITLE.search(plain):
        return "status"
    found = _KIND_TITLE.match(plain)
    if found is None:
        return ""
    return "policy" if found.group("kind").lower() == "directive" else "decision"


_EMPHASIS = re.compile(r"\*\*|__|`")


def classify(title: str, body: str = "") -> str:
    """The class of a piece of memory text; see the module docstring for the rules."""
    head = f"{title}\n{_first_line(body)}"
    text = f"{title}\n{body}"
    if kind := recorded_kind(title):
        return kind
    if _STATUS_TITLE.search(head) or _REPORT_TITLE.search(title) or _is_bare_status(text):
        return "status"
    if _OWN_TITLE.search(title):
        return "learning"
    if _POLICY_TITLE.search(title) or (
        _POLICY_OPEN.search(_opening(text)) and len(text.encode("utf-8")) < 1200
    ):
        return "policy"
    if _DECISION.search(head) or re.search(r"\*\*(what|why):?\*\*", text, re.IGNORECASE):
        return "decision"
    if _CONTRACT.search(title) or _CONTRACT_LABEL.search(body):
        return "contract"
    if _CONVENTION.search(text):
        return "convention"
    return "learning"


def is_structured(cls: str) -> bool:
    """Whether a class may be promoted to the wiki."""
    return cls in STRUCTURED


def _first_line(body: str) -> str:
    return next((ln for ln in body.splitlines() if ln.strip()), "")


def _opening(text: str) -> str:
    """The first sentence after the title: where a directive states itself."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:2])[:300]


def _is_bare_status(text: str) -> bool:
    return len(text) < 200 and not _IDENT.search(text) and bool(_STATUS_ONLY.search(text))
