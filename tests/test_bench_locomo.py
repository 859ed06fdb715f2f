"""`tiermem bench locomo` on a tiny LoCoMo-shaped file the test writes itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli
from tiermem.bench.locomo_data import ChunkIndex, found, load, normal, session_date

FILLER = [
    "How was your week?",
    "Busy, but good. Work keeps me on my toes.",
    "Same here, lots going on.",
    "Glad we could catch up today.",
]


def _turn(speaker: str, n: int, text: str, caption: str = "") -> dict[str, Any]:
    turn: dict[str, Any] = {"speaker": speaker, "dia_id": n, "text": text}
    if caption:
        turn["blip_caption"] = caption
    return turn


def _conversation(sample: str, a: str, b: str, facts: list[list[str]]) -> dict[str, Any]:
    """Sessions whose first turns carry the given facts, padded with small talk."""
    conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    for s, said in enumerate(facts, 1):
        texts = [*said, *FILLER]
        conv[f"session_{s}_date_time"] = f"{s + 1}:15 pm on {s * 3} May, 2023"
        conv[f"session_{s}"] = [
            _turn(a if n % 2 else b, f"D{s}:{n}", text) for n, text in enumerate(texts, 1)
        ]
    conv["session_9_date_time"] = "1:00 pm on 1 June, 2023"  # a date without a session
    return {"sample_id": sample, "conversation": conv, "qa": [], "session_summary": {}}


def write_fixture(path: Path) -> None:
    first = _conversation(
        "conv-a",
        "Ada",
        "Bo",
        [
            ["I flew a zeppelin over Lisbon yesterday!", "A zeppelin? That sounds unreal."],
            ["My sourdough starter is called Gertrude.", "Gertrude the sourdough, love it."],
            ["We adopted a tortoise named Quasar.", "Quasar the tortoise, how fun."],
        ],
    )
    first["conversation"]["session_2"][2]["blip_caption"] = "a photo of a loaf of bread"
    first["qa"] = [
        {
            "question": "What did Ada fly over Lisbon?",
            "answer": "a zeppelin",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "What is the sourdough starter called?",
            "answer": "Gertrude",
            "evidence": ["D2:1; D2:2"],
            "category": 1,
        },
        {
            "question": "When did they adopt the tortoise Quasar?",
            "answer": "May 2023",
            "evidence": ["D3:1"],
            "category": 2,
        },
        {
            "question": "What did Bo bake for Quasar?",
            "evidence": ["D3:2"],
            "category": 5,
            "adversarial_answer": "a cake",
        },
        {
            "question": "Which planet did Ada visit?",
            "answer": "none",
            "evidence": [],
            "category": 3,
        },
    ]
    second = _conversation(
        "conv-b",
        "Cy",
        "Di",
        [
            ["I finished the marathon in Reykjavik!", "Reykjavik marathon, well done."],
            ["My violin teacher is from Montevideo.", "Montevideo, what a city."],
        ],
    )
    second["qa"] = [
        {
            "question": "Where did Cy run the marathon?",
            "answer": "Reykjavik",
            "evidence": ["D1:1", "D7:7"],
            "category": 4,
        },
        {
            "question": "Where is the violin teacher from?",
            "answer": "Montevideo",
            "evidence": ["D2:1"],
            "category": 4,
        },
    ]
    path.write_text(json.dumps([first, second]), encoding="utf-8")


@pytest.fixture
def fixture(tmp_path: Path) -> Path:
    path = tmp_path / "locomo-tiny.json"
    write_fixture(path)
    return path


def test_the_file_is_read_as_the_key_means_it(fixture: Path) -> None:
    first, second = load(fixture)
    assert first.speakers == ("Ada", "Bo") and len(first.sessions) == 3
    assert first.sessions[0].date.isoformat() == "2023-05-03T14:15:00+00:00"
    assert [q.category for q in first.questions] == [4, 1, 2]  # category 5 left out
    assert first.adversarial == 1 and first.no_evidence == 1
    assert first.questions[1].evidence == ("D2:1", "D2:2")  # two ids in one string
    assert second.unknown_evidence == ("D7:7",) and second.questions[0].evidence == ("D1:1",)
    assert first.turns["D2:3"].line().endswith("[shared a photo of a loaf of bread]")
    assert session_date(" 9:05  am on 1 January, 2024").hour == 9


def test_evidence_is_matched_in_normalised_text(fixture: Path) -> None:
    assert found([normal("A  zeppelin?\nThat sounds")], "Bo: a zeppelin? that  sounds unreal") == 1
    conversation = load(fixture)[0]
    index = ChunkIndex(conversation, size=2)
    top = index.search("zeppelin Lisbon", 1)
    assert len(index.texts) == 9 and top and "zeppelin over Lisbon" in top[0]
    index.close()


def test_the_command_reports_recall_coverage_and_baseline(
    fixture: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(
        "bench", "locomo", str(fixture), "--out", str(out), "--workers", "1", "--format", "json"
    )
    assert code == 0, stderr
    assert "conv-a: 3 sessions" in stderr  # progress goes to stderr, JSON alone to stdout
    data = json.loads(stdout)
    assert data["questions"] == {
        "categories_1_4": 6,
        "evaluated": 5,
        "no_evidence": 1,
        "adversarial_left_out": 1,
        "unknown_evidence_ids": ["conv-b D7:7"],
    }
    assert set(data["per_conversation"]) == {"conv-a", "conv-b"}
    assert list(data["categories"]) == [
        "1 multi-hop",
        "2 temporal",
        "3 open-domain",
        "4 single-hop",
    ]
    overall = data["overall"]
    # Every question's evidence is words no other turn holds: all of it is found.
    assert overall["search"]["recall_at_5"] == overall["search"]["recall_at_10"] == 1.0
    assert overall["bm25_chunks"]["recall_at_5"] == 1.0
    assert overall["packed"]["search"] == overall["packed"]["bm25_chunks"] == 1.0
    spawn = overall["spawn"]
    assert 0.0 <= spawn["coverage"] <= 1.0 and spawn["tokens_median"] > 100
    assert data["per_conversation"]["conv-a"]["stages"]["in_store"] == 1.0
    assert data["categories"]["3 open-domain"]["questions"] == 0
    assert any("BM25" in p["system"] for p in data["published"])
    # Like with like: each published figure says its unit and what it cost.
    assert all(p["unit"] and p["tokens"] for p in data["published"])
    # Everything a spawn can load holds the evidence; what it shows is a share of that.
    assert spawn["reachable"] == 1.0 and 0.0 <= spawn["coverage_of_reachable"] <= 1.0
    assert overall["equal_tokens"]["search_recall"] == overall["search"]["recall_at_10"]
    assert 0.0 <= overall["equal_tokens"]["bm25_chunks_recall"] <= 1.0
    answers = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == 5 and all(a["search"]["10"] == a["evidence"] for a in answers)
    assert json.loads((out / "results.json").read_text())["overall"] == overall
    archived = "".join(
        p.read_text() for p in (out / "conv-a" / ".squad" / "memory" / "archive").rglob("*.md")
    )
    # Five turns per note, each opened by the session's date, one agent for the conversation.
    assert "(3 May 2023) Ada: I flew a zeppelin over Lisbon yesterday!\nBo: A zeppelin?" in archived
    assert data["design"] == {
        "agents": "conversation",
        "turns_per_note": 5,
        "dated": True,
        "budget": None,
        "settings": [],
    }


def test_text_output_and_designs(fixture: Path, tmp_path: Path, run_cli: RunCli) -> None:
    code, stdout, stderr = run_cli(
        "bench",
        "locomo",
        str(fixture),
        "--out",
        str(tmp_path / "t"),
        "--workers",
        "1",
        "--agents",
        "speaker",
        "--turns-per-note",
        "1",
        "--dated",
        "--budget",
        "800",
        "--config",
        "cold.ttl_days=400",
    )
    assert code == 0, stderr
    assert "one agent per speaker, 1 turn(s) per note, dated, spawn budget 800" in stdout
    assert "cold.ttl_days=400" in stdout
    assert stdout.splitlines()[4].startswith("overall")
    config = tmp_path / "t" / "conv-a" / ".squad" / "memory" / "config.toml"
    assert "ttl_days = 400" in config.read_text()
    assert (tmp_path / "t" / "conv-a" / ".squad" / "memory" / "cold" / "ada.md").is_file()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--turns-per-note", "0"], "--turns-per-note must be 1 or more"),
        (["--config", "cold.nothing=1"], "unknown key cold.nothing"),
        (["--config", "budget"], "expected SECTION.KEY=VALUE"),
    ],
)
def test_bad_arguments_are_refused(
    fixture: Path, tmp_path: Path, run_cli: RunCli, extra: list[str], message: str
) -> None:
    code, _, stderr = run_cli("bench", "locomo", str(fixture), "--out", str(tmp_path), *extra)
    assert code == 2 and message in stderr


def test_a_file_that_is_not_locomo_is_refused(tmp_path: Path, run_cli: RunCli) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}', encoding="utf-8")
    code, _, stderr = run_cli("bench", "locomo", str(bad))
    assert code == 2 and "not a LoCoMo file" in stderr
