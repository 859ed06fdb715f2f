"""`tiermem bench locomo`: LoCoMo conversations lived through tiermem, then questioned.

Each conversation becomes its own store, written through tiermem's own write path session by
session with `now` = the session's date: its turns are the notes of the conversation's agent
(`Design`), then Scribe ends the session and runs its maintenance, as a team that runs
`scribe end-session` and `scribe run` after each working session would. Then every question
of categories 1-4 goes through `search` and `spawn --auto` (`now` = the last session's date),
and the turns the answer key names as evidence are looked for, by their text, in what came
back. A plain BM25 over chunks of 5 turns runs beside it, on the same questions, in the same
run (`locomo_data.ChunkIndex`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..storage.clock import format_time
from ..vocabulary import LASTING_TIERS, RECALL_TIERS
from .locomo_data import CATEGORIES, ChunkIndex, Conversation, Question, Turn, found, normal

if TYPE_CHECKING:
    from ..memory import Memory

DEPTHS = (5, 10)
# What-if figures pack retrieved text into the room a spawn has for memory when its whole
# prompt stays within 1,500 tokens: its fixed parts (task, headings, the data note,
# escalation) take about 220 tokens of o200k_base.
PACK_TOKENS = 1250
PACK_DEPTH = 40
# Retrieval figures published without a language model, all on the 10 conversations of
# LoCoMo, quoted beside ours as the benchmark folder's README gives them.
# Each says the unit its system returns (a figure over whole sessions counts ten of 19-32
# sessions, a third to a half of a conversation, as found) and what ten results cost.
PUBLISHED: tuple[dict[str, Any], ...] = (
    {
        "system": "LoCoMo paper: DRAGON-plus over dialogue turns",
        "source": "Maharana et al., ACL 2024, Table 3",
        "measure": "share of evidence turns found, adversarial questions included",
        "unit": "dialogue turns",
        "tokens": "k turns (about 30 tokens each)",
        "figures": {"@5": 0.588, "@10": 0.675},
    },
    {
        "system": "LoCoMo paper: DRAGON-plus over session summaries",
        "source": "Maharana et al., ACL 2024, Table 3",
        "measure": "share of evidence turns found, adversarial questions included",
        "unit": "session summaries",
        "tokens": "not reported",
        "figures": {"@5": 0.751},
    },
    {
        "system": "MemPalace, raw (MiniLM embeddings)",
        "source": "the project's own report",
        "measure": "recall",
        "unit": "whole sessions (ten are a third to a half of a conversation)",
        "tokens": "not reported (ten sessions: thousands)",
        "figures": {"@10": 0.603},
    },
    {
        "system": "MemPalace, raw, over dialogue turns",
        "source": "the project's own report",
        "measure": "recall",
        "unit": "dialogue turns",
        "tokens": "k turns",
        "figures": {"@10": 0.48},
    },
    {
        "system": "MemPalace, hybrid with reranking",
        "source": "the project's own report",
        "measure": "recall",
        "unit": "whole sessions (ten are a third to a half of a conversation)",
        "tokens": "not reported (ten sessions: thousands)",
        "figures": {"@10": 0.889},
    },
    {
        "system": "becomer",
        "source": "the project's own report",
        "measure": "evidence hit",
        "unit": "not stated",
        "tokens": "not reported",
        "figures": {"@5": 0.695},
    },
    {
        "system": "memkeeper, semantic + rerank",
        "source": "the project's own report",
        "measure": "recall",
        "unit": "not stated",
        "tokens": "not reported",
        "figures": {"@20": 0.768},
    },
    {
        "system": "BM25 (SQLite FTS5) over chunks of 5 turns",
        "source": "the benchmark folder's README",
        "measure": "all-evidence recall (share of evidence turns found)",
        "unit": "chunks of 5 turns",
        "tokens": "about 1,800 for ten (this harness's bm25_chunks)",
        "figures": {"@5": 0.680, "@10": 0.750, "share@5": 0.742, "share@10": 0.813},
    },
    {
        "system": "BM25 (SQLite FTS5) over single turns",
        "source": "the benchmark folder's README",
        "measure": "all-evidence recall (share of evidence turns found)",
        "unit": "dialogue turns",
        "tokens": "k turns (about 30 tokens each)",
        "figures": {"@5": 0.42, "@10": 0.50, "share@5": 0.47, "share@10": 0.55},
    },
)


@dataclass(frozen=True)
class Design:
    """How conversations become memory and how questions are asked: the harness's choices.

    agents: `conversation` (one agent keeps the whole conversation, as a team's assistant
    would; it searches and spawns for every question) or `speaker` (each speaker's turns are
    that speaker's notes; search covers the whole store, spawn goes to the speaker the
    question names first).
    turns_per_note: consecutive turns of a session written as one note, `Speaker: text` a
    line each (5 by default: the unit of the BM25 baseline, so that the two differ only in
    what the memory does with it; with `speaker`, a note is its first speaker's).
    dated: the session's date opens every note. On by default: an archived note shows no
    date of its own, and a question asking when needs one.
    budget: the spawn budget in tokens (None: the store's configured default).
    settings: config.toml overrides written into every new store.
    """

    agents: str = "conversation"
    turns_per_note: int = 5
    dated: bool = True
    budget: int | None = None
    settings: tuple[tuple[str, str], ...] = ()  # ("cold.ttl_days", "400"), ...


@dataclass
class Answer:
    """What one question found: evidence turns counted in each place they were looked for."""

    conversation: str
    number: int
    category: int
    evidence: int
    search: dict[str, int]  # "5", "10" -> evidence turns found in the top k results
    search_tokens: dict[str, int]  # "5", "10" -> tokens of those results' text
    bm25: dict[str, int]
    bm25_tokens: dict[str, int]
    spawn: int  # evidence turns found in the spawn prompt
    spawn_tokens: int
    situation: str
    agent: str
    reachable: int  # evidence turns in the text a spawn can load (cold, wiki, the archive)
    spawn_reachable: int  # of those, the ones in the spawn prompt
    search_packed: int  # in search results packed into PACK_TOKENS, in rank order
    bm25_packed: int  # in baseline chunks packed the same way
    bm25_equal: int  # in baseline chunks packed into the tokens of search's top 10


@dataclass
class ConversationRun:
    """One conversation's store, timings, stage figures and answers."""

    conversation: str
    sessions: int
    turns: int
    store: str
    ingest_seconds: float
    evaluate_seconds: float
    stages: dict[str, float] = field(default_factory=dict)
    answers: list[Answer] = field(default_factory=list)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- writing the conversation ----------------------------------------------------------------


def agent_name(name: str) -> str:
    """A speaker or conversation name as a tiermem agent name."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return (slug or "agent")[:64]


def _notes(turns: Sequence[Turn], design: Design, date: str) -> list[tuple[str, str]]:
    """(speaker, note text) for a session's turns, as the design writes them."""
    step = max(1, design.turns_per_note)
    prefix = f"({date}) " if design.dated else ""
    notes = []
    for start in range(0, len(turns), step):
        group = turns[start : start + step]
        notes.append((group[0].speaker, prefix + "\n".join(t.line() for t in group)))
    return notes


def ingest(conversation: Conversation, out: Path, design: Design) -> float:
    """Live the conversation through a new store at `out`; return the seconds it took."""
    from ..memory import Memory

    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    Memory.init(out)[0].close()
    if design.settings:
        _configure(out, design.settings)
    whole = agent_name(conversation.sample_id)
    for session in conversation.sessions:
        mem = Memory(out, now=session.date)
        day = f"{session.date.day} {session.date:%B %Y}"
        wrote: list[str] = []
        for speaker, text in _notes(session.turns, design, day):
            agent = agent_name(speaker) if design.agents == "speaker" else whole
            mem.hot_add(agent, "note", text)
            if agent not in wrote:
                wrote.append(agent)
        for agent in wrote:
            mem.end_session(agent)
        mem.scribe_run()
        mem.close()
    return time.perf_counter() - started


def _configure(root: Path, settings: Sequence[tuple[str, str]]) -> None:
    """Write config.toml overrides (section.key = value) into a new store."""
    _configure_file(root / ".squad" / "memory" / "config.toml", settings)


def _configure_file(path: Path, settings: Sequence[tuple[str, str]]) -> None:
    sections: dict[str, list[str]] = {}
    for key, value in settings:
        section, _, name = key.partition(".")
        sections.setdefault(section, []).append(f"{name} = {value}")
    text = "".join(
        f"[{section}]\n" + "".join(f"{line}\n" for line in lines) + "\n"
        for section, lines in sections.items()
    )
    path.write_text(text, encoding="utf-8")


# --- asking the questions --------------------------------------------------------------------


def _spawn_agent(conversation: Conversation, question: Question, design: Design) -> str:
    """Who answers: the conversation's agent, or the speaker the question names first."""
    if design.agents != "speaker":
        return agent_name(conversation.sample_id)
    text = question.text.lower()
    named = [(text.find(s.lower()), s) for s in conversation.speakers if s.lower() in text]
    return agent_name(min(named)[1] if named else conversation.speakers[0])


def _packed(texts: Iterable[tuple[str, int]], budget: int) -> str:
    """Texts in rank order, each taken when it still fits the budget (of tokens)."""
    taken, spent = [], 0
    for text, tokens in texts:
        if spent + tokens <= budget:
            taken.append(text)
            spent += tokens
    return "\n\n".join(taken)


def _live_text(mem: Memory, tiers: Sequence[str] = LASTING_TIERS) -> str:
    """The text of the entries of some tiers a spawn may load (not superseded or retired)."""
    mem.sync()
    docs = [d for tier in tiers for d in mem.context.index.docs(tier=tier) if not d.status]
    return "\n\n".join(d.text for d in docs)


def evaluate(conversation: Conversation, store: Path, design: Design) -> list[Answer]:
    """Ask every question through search and spawn --auto; the baseline beside."""
    from ..index.tokens import O200K
    from ..memory import Memory

    now = format_time(conversation.sessions[-1].date)
    mem = Memory(store, now=now)
    baseline = ChunkIndex(conversation)
    chunk_tokens = dict(zip(baseline.texts, O200K.count_many(baseline.texts), strict=True))
    # Questions refresh entries' last use, never their text.
    live = normal(_live_text(mem, RECALL_TIERS))
    turns = conversation.turns
    answers = []
    deepest = max(DEPTHS)
    for question in conversation.questions:
        evidence = [normal(turns[i].text) for i in question.evidence]
        agent = _spawn_agent(conversation, question, design)
        searcher = None if design.agents == "speaker" else agent
        found_hits = mem.search(question.text, agent=searcher, limit=deepest)
        hits = [h.text for h in found_hits]
        chunks = baseline.search(question.text, PACK_DEPTH)
        result = mem.spawn(agent, question.text, auto=True, budget=design.budget)
        many = mem.search(question.text, agent=searcher, limit=PACK_DEPTH)
        joined = {str(k): ("\n\n".join(hits[:k]), "\n\n".join(chunks[:k])) for k in DEPTHS}
        sizes = O200K.count_many([text for pair in joined.values() for text in pair])
        reachable = [text for text in evidence if text in live]
        equal = sizes[2 * list(joined).index(str(deepest))]
        answers.append(
            Answer(
                conversation=conversation.sample_id,
                number=question.number,
                category=question.category,
                evidence=len(evidence),
                search={k: found(evidence, ours) for k, (ours, _) in joined.items()},
                search_tokens={k: sizes[2 * n] for n, k in enumerate(joined)},
                bm25={k: found(evidence, theirs) for k, (_, theirs) in joined.items()},
                bm25_tokens={k: sizes[2 * n + 1] for n, k in enumerate(joined)},
                spawn=found(evidence, result.prompt),
                spawn_tokens=result.tokens["total"],
                situation=result.situation,
                agent=agent,
                reachable=len(reachable),
                spawn_reachable=found(reachable, result.prompt),
                search_packed=found(
                    evidence, _packed(((h.text, h.tokens) for h in many), PACK_TOKENS)
                ),
                bm25_packed=found(
                    evidence, _packed(((c, chunk_tokens[c]) for c in chunks), PACK_TOKENS)
                ),
                bm25_equal=found(evidence, _packed(((c, chunk_tokens[c]) for c in chunks), equal)),
            )
        )
    baseline.close()
    mem.close()
    return answers


def stages(conversation: Conversation, store: Path) -> dict[str, float]:
    """Where the evidence turns are after ingest: the share of them whose text is anywhere in
    the store's files (archive included), and in the tiers a spawn draws from (cold and wiki
    entries that are neither expired nor superseded)."""
    from ..memory import Memory

    wanted = {i for q in conversation.questions for i in q.evidence}
    texts = [normal(conversation.turns[i].text) for i in sorted(wanted)]
    memory = store / ".squad" / "memory"
    everything = "\n".join(
        p.read_text(encoding="utf-8") for p in sorted(memory.rglob("*.md")) if p.is_file()
    )
    mem = Memory(store, now=format_time(conversation.sessions[-1].date))
    live = _live_text(mem)
    mem.close()
    n = max(1, len(texts))
    return {
        "evidence_turns": len(texts),
        "in_store": round(found(texts, everything) / n, 4),
        "in_cold_or_wiki": round(found(texts, live) / n, 4),
    }


def run_conversation(conversation: Conversation, out: Path, design: Design) -> ConversationRun:
    """Ingest and evaluate one conversation (a worker's whole job)."""
    store = out / conversation.folder
    turns = sum(len(s.turns) for s in conversation.sessions)
    _log(f"{conversation.sample_id}: {len(conversation.sessions)} sessions, {turns} turns")
    ingest_seconds = ingest(conversation, store, design)
    _log(f"{conversation.sample_id}: ingested in {ingest_seconds:.1f} s; asking questions")
    started = time.perf_counter()
    answers = evaluate(conversation, store, design)
    evaluate_seconds = time.perf_counter() - started
    _log(f"{conversation.sample_id}: {len(answers)} questions in {evaluate_seconds:.1f} s")
    return ConversationRun(
        conversation.sample_id,
        len(conversation.sessions),
        turns,
        str(store),
        round(ingest_seconds, 2),
        round(evaluate_seconds, 2),
        stages(conversation, store),
        answers,
    )


def run(
    conversations: Sequence[Conversation], out: Path, design: Design, workers: int
) -> list[ConversationRun]:
    """Every conversation, `workers` at a time (each in its own process and store)."""
    out.mkdir(parents=True, exist_ok=True)
    if workers <= 1 or len(conversations) <= 1:
        return [run_conversation(c, out, design) for c in conversations]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_conversation, c, out, design) for c in conversations]
        return [f.result() for f in futures]


# --- figures -------------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return round(sum(items) / len(items), 4) if items else 0.0


def _median(values: Sequence[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _p90(values: Sequence[int]) -> float:
    ordered = sorted(values)
    return float(ordered[int(0.9 * (len(ordered) - 1))]) if ordered else 0.0


def figures(answers: Sequence[Answer]) -> dict[str, Any]:
    """Recall, evidence coverage and tokens over a set of answers."""

    def retrieval(found_at: str, tokens_at: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in (str(d) for d in DEPTHS):
            out[f"recall_at_{k}"] = _mean(
                float(getattr(a, found_at)[k] == a.evidence) for a in answers
            )
            out[f"partial_at_{k}"] = _mean(getattr(a, found_at)[k] / a.evidence for a in answers)
            out[f"tokens_at_{k}_median"] = _median([getattr(a, tokens_at)[k] for a in answers])
        return out

    spawn_tokens = [a.spawn_tokens for a in answers]
    reachable = sum(a.reachable for a in answers)
    return {
        "questions": len(answers),
        "search": retrieval("search", "search_tokens"),
        "spawn": {
            "coverage": _mean(a.spawn / a.evidence for a in answers),
            "all_evidence": _mean(float(a.spawn == a.evidence) for a in answers),
            "tokens_median": _median(spawn_tokens),
            "tokens_p90": _p90(spawn_tokens),
            "reachable": _mean(a.reachable / a.evidence for a in answers),
            "coverage_of_reachable": round(sum(a.spawn_reachable for a in answers) / reachable, 4)
            if reachable
            else 0.0,
            "situations": dict(sorted(Counter(a.situation for a in answers).items())),
        },
        "bm25_chunks": retrieval("bm25", "bm25_tokens"),
        "packed": {
            "tokens": PACK_TOKENS,
            "search": _mean(a.search_packed / a.evidence for a in answers),
            "bm25_chunks": _mean(a.bm25_packed / a.evidence for a in answers),
        },
        "equal_tokens": {
            "tokens": "those of search's top 10, question by question",
            "search_recall": _mean(float(a.search["10"] == a.evidence) for a in answers),
            "bm25_chunks_recall": _mean(float(a.bm25_equal == a.evidence) for a in answers),
        },
    }


def summary(
    runs: Sequence[ConversationRun],
    source: Path,
    design: Design,
    seconds: float,
    conversations: Sequence[Conversation],
) -> dict[str, Any]:
    """The JSON the command prints: overall, per category, per conversation."""
    from .full import commit, cpus

    answers = [a for r in runs for a in r.answers]
    ingest_total = sum(r.ingest_seconds for r in runs)
    return {
        "file": source.name,
        "commit": commit(),
        "machine": f"{_machine()}, {cpus()} cpus",
        "design": asdict(design),
        "conversations": len(runs),
        "questions": {
            "categories_1_4": sum(len(c.questions) + c.no_evidence for c in conversations),
            "evaluated": len(answers),
            "no_evidence": sum(c.no_evidence for c in conversations),
            "adversarial_left_out": sum(c.adversarial for c in conversations),
            "unknown_evidence_ids": sorted(
                f"{c.sample_id} {i}" for c in conversations for i in c.unknown_evidence
            ),
        },
        "seconds": {
            "wall": round(seconds, 2),
            "ingest": round(ingest_total, 2),
            "evaluate": round(sum(r.evaluate_seconds for r in runs), 2),
        },
        "overall": figures(answers),
        "categories": {
            f"{n} {name}": figures([a for a in answers if a.category == n])
            for n, name in CATEGORIES.items()
        },
        "per_conversation": {
            r.conversation: {
                "sessions": r.sessions,
                "turns": r.turns,
                "ingest_seconds": r.ingest_seconds,
                "evaluate_seconds": r.evaluate_seconds,
                "stages": r.stages,
                "store": r.store,
                **figures(r.answers),
            }
            for r in runs
        },
        "published": list(PUBLISHED),
    }


def _machine() -> str:
    import platform

    return f"{platform.machine()}, Python {platform.python_version()}"


def print_text(data: dict[str, Any]) -> None:
    """The summary as tables."""
    q, d = data["questions"], data["design"]
    print(
        f"{data['file']}: {data['conversations']} conversations, {q['evaluated']} questions of "
        f"categories 1-4 with evidence ({q['no_evidence']} without, "
        f"{q['adversarial_left_out']} adversarial left out); commit {data['commit']}"
    )
    print(
        f"design: one agent per {d['agents']}, {d['turns_per_note']} turn(s) per note"
        f"{', dated' if d['dated'] else ''}, spawn budget {d['budget'] or 'default'}"
        + "".join(f", {k}={v}" for k, v in d["settings"])
    )
    print(
        f"\n{'':<22}{'n':>5} {'search R@5':>10}{'R@10':>6}{'part@10':>8}{'tok@10':>7}"
        f" {'BM25 R@5':>8}{'R@10':>6}{'part@10':>8}{'tok@10':>7}"
        f" {'spawn cov':>9}{'tok p50':>8}{'p90':>6}{'reach':>6}"
        f" {'packed search':>13}{'BM25':>6} {'equal R@10':>10}{'BM25':>6}"
    )
    rows = [("overall", data["overall"])]
    rows += [(f"cat {name}", f) for name, f in data["categories"].items()]
    rows += list(data["per_conversation"].items())
    for label, f in rows:
        s, b, p, k = f["search"], f["bm25_chunks"], f["spawn"], f["packed"]
        e = f["equal_tokens"]
        print(
            f"{label:<22}{f['questions']:>5} {s['recall_at_5']:>10.3f}{s['recall_at_10']:>6.3f}"
            f"{s['partial_at_10']:>8.3f}{s['tokens_at_10_median']:>7.0f}"
            f" {b['recall_at_5']:>8.3f}{b['recall_at_10']:>6.3f}{b['partial_at_10']:>8.3f}"
            f"{b['tokens_at_10_median']:>7.0f} {p['coverage']:>9.3f}{p['tokens_median']:>8.0f}"
            f"{p['tokens_p90']:>6.0f}{p['reachable']:>6.3f} {k['search']:>13.3f}"
            f"{k['bm25_chunks']:>6.3f} {e['search_recall']:>10.3f}{e['bm25_chunks_recall']:>6.3f}"
        )
    print(
        "\nR@k: share of questions with every evidence turn in the top k results; part@10: "
        "share of evidence turns in them; tok@10: tokens of those results (median). reach: "
        "share of evidence turns in what a spawn can load (cold, wiki, the archive); "
        f"packed: evidence in the results taken in rank order within "
        f"{data['overall']['packed']['tokens']:,} tokens; equal R@10: search's top 10 beside "
        "BM25 chunks packed into the same tokens, question by question."
    )
    sec = data["seconds"]
    print(
        f"ingest {sec['ingest']:.1f} s and questions {sec['evaluate']:.1f} s summed over "
        f"conversations; wall {sec['wall']:.1f} s; stores in {data['out']}"
    )
    print("\npublished, on all 10 conversations, without a language model:")
    for item in data["published"]:
        figures = ", ".join(f"{k} {v:.3f}" for k, v in item["figures"].items())
        print(
            f"  {item['system']}: {item['measure']} {figures}; unit: {item['unit']}; "
            f"tokens: {item['tokens']} ({item['source']})"
        )


def chart(data: dict[str, Any], path: Path) -> bool:
    """Bars of the overall and per-category figures; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    groups = [("overall", data["overall"])] + [
        (name.split(" ", 1)[1], f) for name, f in data["categories"].items()
    ]
    labels = [g for g, _ in groups]
    x = list(range(len(groups)))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    series = [
        ("tiermem search R@5", lambda f: f["search"]["recall_at_5"]),
        ("tiermem search R@10", lambda f: f["search"]["recall_at_10"]),
        ("BM25 5-turn chunks R@5", lambda f: f["bm25_chunks"]["recall_at_5"]),
        ("BM25 5-turn chunks R@10", lambda f: f["bm25_chunks"]["recall_at_10"]),
    ]
    _bars(left, x, series, groups)
    left.set_title("all-evidence recall", fontsize=9)
    packed = data["overall"]["packed"]["tokens"]
    series = [
        ("tiermem spawn --auto", lambda f: f["spawn"]["coverage"]),
        ("reachable by spawn", lambda f: f["spawn"]["reachable"]),
        (f"tiermem search within {packed:,} tokens", lambda f: f["packed"]["search"]),
        (f"BM25 chunks within {packed:,} tokens", lambda f: f["packed"]["bm25_chunks"]),
    ]
    _bars(right, x, series, groups)
    right.set_title("share of evidence turns in a prompt-sized text", fontsize=9)
    for ax in (left, right):
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    left.axhline(0.85, color="grey", linestyle="--", linewidth=0.8)
    right.axhline(0.8, color="grey", linestyle="--", linewidth=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _bars(ax: Any, x: list[int], series: list[tuple[str, Any]], groups: list[Any]) -> None:
    width = 0.8 / len(series)
    for n, (label, value) in enumerate(series):
        offset = (n - (len(series) - 1) / 2) * width
        ax.bar([i + offset for i in x], [value(f) for _, f in groups], width, label=label)


def main(
    path: Path,
    out: Path,
    design: Design,
    workers: int | None = None,
    conversations: Sequence[Conversation] | None = None,
) -> dict[str, Any]:
    """Run every conversation of a LoCoMo file and summarise; results also written to `out`
    (results.json, and answers.jsonl: per question, the evidence turns found where)."""
    from .locomo_data import load

    if conversations is None:
        conversations = load(path)
    started = time.perf_counter()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    runs = run(conversations, out, design, workers or min(cpus, len(conversations)))
    data = summary(runs, path, design, time.perf_counter() - started, conversations)
    data["out"] = str(out)
    (out / "results.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    with (out / "answers.jsonl").open("w", encoding="utf-8") as lines:
        for r in runs:
            for answer in r.answers:
                lines.write(json.dumps(asdict(answer)) + "\n")
    return data


def design_of(args: argparse.Namespace) -> Design:
    """The design the command line asks for; UsageError for settings a store would refuse."""
    from ..errors import UsageError

    if args.turns_per_note < 1:
        raise UsageError("--turns-per-note must be 1 or more")
    if args.budget is not None and args.budget < 0:
        raise UsageError("--budget must be zero or more tokens")
    settings = []
    for item in args.config:
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            raise UsageError(f"--config {item!r}: expected SECTION.KEY=VALUE")
        settings.append((key.strip(), value.strip()))
    design = Design(args.agents, args.turns_per_note, args.dated, args.budget, tuple(settings))
    if settings:
        from ..storage.config import load as load_config

        with tempfile.TemporaryDirectory(prefix="tiermem-locomo-") as scratch:
            _configure_file(Path(scratch) / "config.toml", design.settings)
            load_config(Path(scratch) / "config.toml")
    return design


def command(args: argparse.Namespace) -> int:
    """`tiermem bench locomo FILE`."""
    from ..errors import UsageError
    from .locomo_data import load

    path = Path(args.file).expanduser()
    if not path.is_file():
        raise UsageError(f"{args.file} is not a file")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be 1 or more")
    design = design_of(args)
    conversations = load(path)
    out = (
        Path(args.out).expanduser().resolve()
        if args.out
        else Path(tempfile.mkdtemp(prefix="tiermem-locomo-"))
    )
    if out.is_dir() and any(out.iterdir()) and not (out / "results.json").is_file():
        raise UsageError(
            f"{out} holds other files: give a new or empty folder, or an earlier --out"
        )
    for conversation in conversations:  # an earlier run's stores are replaced, never mixed
        shutil.rmtree(out / conversation.folder, ignore_errors=True)
    data = main(path, out, design, args.workers, conversations)
    if args.chart and not chart(data, Path(args.chart)):
        print("chart skipped: install the plot extra to draw it", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(data, indent=2))
    else:
        print_text(data)
    return 0
