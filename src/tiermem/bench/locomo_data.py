"""LoCoMo conversations as the benchmark reads them, and the plain BM25 baseline beside it.

A LoCoMo file (Maharana et al., ACL 2024) is a JSON list of conversations between two
speakers over many dated sessions, each with questions whose `evidence` names the turns
(`dia_id`) that answer them. Nothing here writes to a tiermem store: the baseline has its
own in-memory SQLite FTS5 table, independent of tiermem's index.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import UsageError

# Categories 1-4 are answerable from the conversation; 5 is adversarial (no answer in it) and
# is left out of recall figures, as is usual. The file gives numbers only; these names are the
# ones in common use (the benchmark's evaluation code prints categories in the order 4, 1, 2,
# 3, 5, the order of the paper's tables: single-hop, multi-hop, temporal, open-domain).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# Evidence is written "D3:12"; a few items hold several ids in one string ("D8:6; D9:17",
# "D9:1 D4:4") or a stray colon ("D:11:26"): every id in the string counts.
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation: who said what, and the image they shared, if any."""

    dia_id: str
    speaker: str
    text: str
    caption: str = ""

    def line(self) -> str:
        """The turn as one line of text: speaker, words, and a shared image's caption."""
        shared = f" [shared {self.caption}]" if self.caption else ""
        return f"{self.speaker}: {self.text}{shared}"


@dataclass(frozen=True)
class Session:
    """One dated session of a conversation."""

    number: int
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    """A question of categories 1-4 and the turns that answer it."""

    number: int  # position in the conversation's `qa` list
    text: str
    category: int
    evidence: tuple[str, ...]  # dia_ids present in the conversation, in the key's order


@dataclass(frozen=True)
class Conversation:
    """A conversation with its sessions, its questions, and the key's loose ends."""

    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    adversarial: int  # category 5 questions, left out
    unknown_evidence: tuple[str, ...]  # evidence ids naming no turn of the conversation
    no_evidence: int  # questions of categories 1-4 left with no evidence turn

    @property
    def folder(self) -> str:
        """The name of the conversation's store folder: its id, made safe as a file name."""
        return re.sub(r"[^A-Za-z0-9_-]+", "-", self.sample_id).strip("-") or "conversation"

    @property
    def turns(self) -> dict[str, Turn]:
        """Every turn by its dia_id."""
        return {t.dia_id: t for s in self.sessions for t in s.turns}


def session_date(value: str) -> datetime:
    """A LoCoMo session date ("1:56 pm on 8 May, 2023") as a UTC time."""
    try:
        return datetime.strptime(" ".join(value.split()), _DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise UsageError(f"unreadable LoCoMo session date {value!r}") from None


def load(path: Path) -> list[Conversation]:
    """Read a LoCoMo file; UsageError when it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read {path} as LoCoMo JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise UsageError(f"{path} is not a LoCoMo file (expected a list of conversations)")
    try:
        conversations = [_conversation(item, n) for n, item in enumerate(data)]
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise UsageError(f"{path} is not a LoCoMo file: missing or malformed {exc}") from None
    folders = [c.folder for c in conversations]
    if len(set(folders)) < len(folders):
        raise UsageError(f"{path}: two conversations have the same sample_id")
    if not all(c.sessions for c in conversations):
        raise UsageError(f"{path}: a conversation has no session")
    return conversations


def _conversation(item: dict[str, Any], n: int) -> Conversation:
    conv = item["conversation"]
    numbers = sorted(
        int(m.group(1))
        for key in conv
        if (m := _SESSION_KEY.fullmatch(key)) and isinstance(conv[key], list) and conv[key]
    )
    sessions = tuple(
        Session(
            number,
            session_date(conv[f"session_{number}_date_time"]),
            tuple(
                Turn(
                    str(t["dia_id"]),
                    str(t["speaker"]),
                    str(t["text"]),
                    str(t.get("blip_caption") or ""),
                )
                for t in conv[f"session_{number}"]
            ),
        )
        for number in numbers
    )
    known = {t.dia_id for s in sessions for t in s.turns}
    questions: list[Question] = []
    unknown: list[str] = []
    adversarial = no_evidence = 0
    for number, qa in enumerate(item["qa"]):
        category = int(qa["category"])
        if category not in CATEGORIES:
            adversarial += 1
            continue
        ids = [f"D{a}:{b}" for raw in qa.get("evidence") or [] for a, b in _evidence(raw)]
        unknown += [i for i in ids if i not in known]
        evidence = tuple(dict.fromkeys(i for i in ids if i in known))
        if not evidence:
            no_evidence += 1
            continue
        questions.append(Question(number, str(qa["question"]), category, evidence))
    return Conversation(
        str(item.get("sample_id") or f"conv-{n}"),
        (str(conv["speaker_a"]), str(conv["speaker_b"])),
        sessions,
        tuple(questions),
        adversarial,
        tuple(unknown),
        no_evidence,
    )


def _evidence(raw: object) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _EVIDENCE_ID.finditer(str(raw))]


# --- matching evidence ---------------------------------------------------------------------


def normal(text: str) -> str:
    """Text as evidence is matched: case folded, every run of whitespace one space."""
    return " ".join(text.split()).casefold()


def found(evidence: Sequence[str], haystack: str) -> int:
    """How many of the evidence turn texts (already `normal`) are in the haystack."""
    hay = normal(haystack)
    return sum(1 for text in evidence if text in hay)


# --- the baseline: plain BM25 over chunks of turns ------------------------------------------

CHUNK_TURNS = 5
_WORD = re.compile(r"\w+")


class ChunkIndex:
    """BM25 (SQLite FTS5, porter stemming) over chunks of consecutive turns of a session.

    A chunk is CHUNK_TURNS turns in order, one `Turn.line` each, never across sessions; a
    query matches any of its words. This is the baseline every memory system can be compared
    with: no store, no summaries, no budget.
    """

    def __init__(self, conversation: Conversation, size: int = CHUNK_TURNS) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE chunks USING fts5(text, tokenize='porter unicode61')")
        self.texts: list[str] = []
        for session in conversation.sessions:
            turns = session.turns
            for start in range(0, len(turns), size):
                text = "\n".join(t.line() for t in turns[start : start + size])
                self.texts.append(text)
                self.db.execute(
                    "INSERT INTO chunks(rowid, text) VALUES(?, ?)", (len(self.texts), text)
                )

    def search(self, query: str, limit: int) -> list[str]:
        """The texts of the best `limit` chunks for the query, best first."""
        words = list(dict.fromkeys(_WORD.findall(query.lower())))
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks), rowid LIMIT ?",
            (match, limit),
        ).fetchall()
        return [self.texts[rowid - 1] for (rowid,) in rows]

    def close(self) -> None:
        """Drop the in-memory table."""
        self.db.close()
