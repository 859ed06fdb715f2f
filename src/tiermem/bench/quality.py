"""Scribe quality on a replayed store: compression, fact retention, policy retention."""

from __future__ import annotations

import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..memory import Memory
from ..storage import archive, audit, entries, files, store
from ..storage.clock import format_time, parse_time
from ..vocabulary import FILE_TIERS, LASTING_TIERS
from . import carried_in_prose
from .corpus import Event
from .facts import key_facts

if TYPE_CHECKING:
    from ..vocabulary import FileTier

_META = re.compile(r"^<!-- tiermem.*-->$", re.MULTILINE)
SIZE_BUCKETS = (2048, 4096, 8192, 16384, 32768)


def compression(mem: Memory) -> dict[str, Any]:
    """Raw bytes / summary bytes of every session summary and checkpoint Scribe wrote.

    The curve buckets sessions by raw size, with the median ratio and, for sessions whose
    entries are still in cold or wiki, the median key-fact retention of those entries against
    the session's raw text.
    """
    sessions = _sessions(mem)
    big = [raw / size for raw, size, _ in sessions if raw > 2048 and size]
    curve = []
    low = 0
    for high in (*SIZE_BUCKETS, 10**12):
        bucket = [(raw / size, kept) for raw, size, kept in sessions if low < raw <= high and size]
        if bucket:
            retained = [kept for _, kept in bucket if kept is not None]
            curve.append(
                {
                    "raw_bytes": f"{low}-{high if high < 10**12 else ''}",
                    "sessions": len(bucket),
                    "ratio_median": round(statistics.median(r for r, _ in bucket), 2),
                    "retention_sessions": len(retained),
                    "retention_median": round(statistics.median(retained), 4) if retained else None,
                }
            )
        low = high
    return {
        "summaries": len(sessions),
        "over_2kb": len(big),
        "ratio_over_2kb_min": round(min(big), 2) if big else None,
        "ratio_over_2kb_median": round(statistics.median(big), 2) if big else None,
        "share_at_least_5": round(sum(r >= 5 for r in big) / len(big), 4) if big else None,
        "curve": curve,
    }


def _sessions(mem: Memory) -> list[tuple[int, int, float | None]]:
    """(raw bytes, summary bytes, retention or None) of every session Scribe compressed."""
    kept = _entries(mem, LASTING_TIERS)
    rows = []
    for line in audit.read(mem.layout):
        if line.get("action") not in ("end-session", "checkpoint") or not line.get("summary_bytes"):
            continue
        ids = line.get("ids")
        made = [kept[i] for i in ids if i in kept] if isinstance(ids, list) else []
        rows.append(
            (int(str(line["raw_bytes"])), int(str(line["summary_bytes"])), _retained(mem, made))
        )
    return rows


def _entries(mem: Memory, tiers: tuple[FileTier, ...]) -> dict[str, entries.Entry]:
    found: dict[str, entries.Entry] = {}
    for tier in tiers:
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            loaded = store.load(mem.layout, tier, path)
            if loaded is not None:
                found.update((e.id, e) for e in loaded.entries)
    return found


def _retained(mem: Memory, made: list[entries.Entry]) -> float | None:
    """Key facts of a session's raw text (its archive records) found in what it became."""
    facts = key_facts(_archived_sources(mem, made))
    if not facts:
        return None
    return len(facts & key_facts("\n".join(e.text for e in made))) / len(facts)


def tier_text(mem: Memory, tiers: tuple[FileTier, ...]) -> str:
    """The text of every file of some tiers, without metadata comments."""
    parts = []
    for tier in tiers:
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            if not files.is_temp(path):
                parts.append(_META.sub("", path.read_text(encoding="utf-8")))
    return "\n".join(parts)


def _source_text(mem: Memory) -> str:
    """The raw text that today's cold and wiki entries were made from (their archive sources)."""
    return _archived_sources(mem, _entries(mem, LASTING_TIERS).values())


def _archived_sources(mem: Memory, made: Iterable[entries.Entry]) -> str:
    """The text of the archive records some entries name as their sources."""
    locations = {s.split("#")[0] for e in made for s in e.sources}
    texts = []
    for location in sorted(locations):
        path = mem.layout.memory / location
        if location.startswith("archive/") and path.is_file():
            texts.append(_META.sub("", archive.parse(path.read_bytes(), path).text))
    return "\n".join(texts)


def retention(mem: Memory, events: list[Event]) -> dict[str, Any]:
    """Key-fact retention of cold + wiki (METRICS.md), against two raw texts.

    `retention_vs_sources`: against the raw text today's cold and wiki entries were made
    from (what the definition names). `retention_vs_all_raw`: against everything the
    replay fed, including text whose summaries have since expired to the archive.
    """
    kept_text = tier_text(mem, LASTING_TIERS)
    kept = key_facts(kept_text)
    sources = key_facts(_source_text(mem))
    raw = key_facts("\n".join(e.text for e in events))
    return {
        "source_facts": len(sources),
        "retention_vs_sources": round(len(sources & kept) / max(1, len(sources)), 4),
        "raw_facts": len(raw),
        "retention_vs_all_raw": round(len(raw & kept) / max(1, len(raw)), 4),
        "store_bytes_cold_wiki": len(kept_text.encode("utf-8")),
        "raw_bytes": sum(len(e.text.encode("utf-8")) for e in events),
    }


def readability(mem: Memory) -> dict[str, Any]:
    """How readable what Scribe wrote is (METRICS.md, "Scribe quality"): the lines of cold
    and wiki that list names without saying anything of them, the titles with a defect, and
    each session summary's fact retention raw and in prose beside the greedy cover of the
    session's whole sentences at the summary's bytes (the most facts whole sentences could
    have kept in that room)."""
    made = _entries(mem, LASTING_TIERS)
    lines = [ln for e in made.values() for ln in _prose_lines(e.body)]
    defects = [
        (e.id, e.title, found)
        for e in made.values()
        if (found := carried_in_prose.title_defects(e.title, e.title, e.created))
    ]
    sessions = [_session_retention(mem, e) for e in made.values() if _is_summary(e)]
    kept = [s for s in sessions if s is not None]
    return {
        "lines": len(lines),
        "fact_list_lines": sum(carried_in_prose.is_fact_list(ln) for ln in lines),
        "titles": len(made),
        "title_defects": len(defects),
        "title_defect_examples": [f"{i}: {t!r} ({', '.join(f)})" for i, t, f in defects[:5]],
        "summaries": len(kept),
        "retention_median": _median_of(kept, 0),
        "retention_in_prose_median": _median_of(kept, 1),
        "greedy_cover_median": _median_of(kept, 2),
    }


_FENCE = re.compile(r"^\s*(```|~~~)")


def _prose_lines(text: str) -> list[str]:
    """The non-blank lines of a text outside fenced code (code is quoted as code)."""
    found, code = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            code = not code
        elif not code and line.strip():
            found.append(line)
    return found


def _is_summary(entry: entries.Entry) -> bool:
    return dict(entry.extra).get("kind") in ("session", "checkpoint")


def _median_of(rows: list[tuple[float, float, float]], n: int) -> float | None:
    return round(statistics.median(r[n] for r in rows), 4) if rows else None


def _session_retention(mem: Memory, entry: entries.Entry) -> tuple[float, float, float] | None:
    """(retention, retention in prose, greedy cover) of one summary against its session's
    raw text, or None when that text holds no fact."""
    raw = _archived_sources(mem, [entry])
    facts = key_facts(raw)
    if not facts:
        return None
    source = carried_in_prose.Source()
    source.add(raw)
    kept = facts & key_facts(entry.text)
    in_prose = carried_in_prose.carried(kept, entry.text, source)
    cover = _greedy_cover(raw, facts, len(entry.body.encode("utf-8")))
    return len(kept) / len(facts), len(in_prose) / len(facts), len(cover) / len(facts)


def _greedy_cover(raw: str, facts: set[str], room: int) -> set[str]:
    """The facts whole sentences of the raw text keep within `room` bytes, taken greedily by
    new facts per byte."""
    sentences = [(s, key_facts(s) & facts) for s in carried_in_prose.source_sentences(raw)]
    got: set[str] = set()
    spent = 0
    while True:
        fits = [(s, f) for s, f in sentences if f - got and spent + len(s.encode()) + 1 <= room]
        if not fits:
            return got
        best, found = max(fits, key=lambda sf: len(sf[1] - got) / (len(sf[0].encode()) + 1))
        sentences.remove((best, found))
        spent += len(best.encode()) + 1
        got |= found


def _policies(mem: Memory) -> tuple[set[str], set[str]]:
    """(policy ids reachable in hot/cold/wiki, policy ids found only in archived entries)."""
    reachable: set[str] = set()
    for tier in FILE_TIERS:
        for path in sorted(mem.layout.tier_dir(tier).glob("*.md")):
            loaded = store.load(mem.layout, tier, path)
            if loaded is not None:
                reachable |= {e.id for e in loaded.entries if e.cls == "policy"}
    archived: set[str] = set()
    for path in archive.records(mem.layout):
        record = archive.parse(path.read_bytes(), path)
        if record.kind in ("expire", "cold-budget"):
            parsed = entries.parse(record.text, path)
            archived |= {e.id for e in parsed.entries if e.cls == "policy"}
    return reachable, archived - reachable


def policy_retention(root: Path, now: str, jump_days: int = 400) -> dict[str, Any]:
    """Policies reachable after the replay, and after Scribe runs with the clock jumped."""

    before, lost_before = _policies(Memory(root, now=now))
    with tempfile.TemporaryDirectory(prefix="tiermem-jump-") as scratch:
        copy = Path(scratch) / "store"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("index.sqlite*", ".locks"))
        later = format_time(parse_time(now) + timedelta(days=jump_days))
        jumped = Memory(copy, now=later)
        jumped.scribe_run()
        after, _ = _policies(jumped)
        jumped.close()
    total = len(before | lost_before)
    return {
        "policies": total,
        "retention": round(len(before) / total, 4) if total else 1.0,
        "retention_after_jump": round(len(after & (before | lost_before)) / total, 4)
        if total
        else 1.0,
        "jump_days": jump_days,
    }


def scribe_run_seconds(root: Path, now: str) -> float:
    """Time of a full `scribe run` on a copy of the store."""

    with tempfile.TemporaryDirectory(prefix="tiermem-run-") as scratch:
        copy = Path(scratch) / "store"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("index.sqlite*", ".locks"))
        mem = Memory(copy, now=now)
        started = time.perf_counter()
        mem.scribe_run()
        seconds = time.perf_counter() - started
        mem.close()
    return round(seconds, 3)
