"""One small input sample per pipeline benchmark, built in tmp_path, and how to judge it.

BEAM's, LoCoMo-Plus's and LongMemEval's samples are cut from the shared real files (never
copied into the project); tinybench's is made up. Each case names what the contract suite needs: the sample,
its judge overrides, a deterministic reply per prompt, a record to break and its field.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import SHARED_DATA
from fake_server import RecordedRequest, Reply

BEAM_FILE = SHARED_DATA / "beam" / "beam_10m_results.json"
PLUS_FILE = SHARED_DATA / "locomo_plus" / "kumiho" / "all_results.json"
LME_FILE = SHARED_DATA / "longmemeval" / "memory-agents" / "my_predictions.jsonl.eval-results-gpt-4o"
LME_REFERENCE = SHARED_DATA / "longmemeval" / "longmemeval_reference.json"
TINY_DIR = Path(__file__).resolve().parent


def _split(prompt: str) -> bool:
    """A fixed half of the prompts get the good verdict (the same in every run and mode)."""
    return zlib.crc32(prompt.encode()) % 3 != 0


def beam_sample(path: Path) -> Path:
    """mem0's BEAM layout, its first five questions (7 rubric items)."""
    whole = json.loads(BEAM_FILE.read_text(encoding="utf-8"))
    whole["evaluations"] = whole["evaluations"][:5]
    path.write_text(json.dumps(whole), encoding="utf-8")
    return path


def beam_break(path: Path) -> tuple[str, str]:
    whole = json.loads(path.read_text(encoding="utf-8"))
    del whole["evaluations"][2]["question_type"]
    path.write_text(json.dumps(whole), encoding="utf-8")
    return "[2]", "question_type"


def plus_sample(path: Path) -> Path:
    """kumiho's stored run (all Cognitive): every 40th of its first 320 items and the first
    two its judge marked wrong (four relation types, 8 of 10 correct).

    (Every stored verdict of the authors' own run is the text of a failed call, so their
    file gives no figure under our parser.)"""
    rows = json.loads(PLUS_FILE.read_text(encoding="utf-8"))
    kept = rows[:320:40] + [row for row in rows if row["judge_score"] is False][:2]
    path.write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
    return path


def plus_break(path: Path) -> tuple[str, str]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows[3]["judge_score"] = "yes"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return "[3]", "judge_score"


def lme_sample(path: Path) -> Path:
    """memory-agents' gpt-4o file (stored verdicts), every 50th of its 500 rows, as a JSON
    list, and those 10 questions of the dataset file beside it (:func:`lme_overrides`)."""
    rows = [json.loads(line) for line in LME_FILE.read_text(encoding="utf-8").splitlines()
            if line.strip()][::50]
    kept = {row["question_id"] for row in rows}
    items = [item for item in json.loads(LME_REFERENCE.read_text(encoding="utf-8"))
             if item["question_id"] in kept]
    (path.parent / "lme_reference.json").write_text(json.dumps(items), encoding="utf-8")
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path


def lme_overrides(path: Path) -> tuple[str, ...]:
    """Every LongMemEval job names its dataset file (written by :func:`lme_sample`)."""
    return (f"data.reference={path.parent / 'lme_reference.json'}",)


def lme_break(path: Path) -> tuple[str, str]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows[3]["hypothesis"] = 7
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return "[3]", "hypothesis"


def tiny_sample(path: Path) -> Path:
    """Five made-up questions of both kinds, with stored verdicts."""
    rows = [
        {"id": f"t{i}", "kind": kind, "question": f"What is invented fact {i}?",
         "answer": f"fact {i}", "prediction": f"it is fact {i}", "verdict": ok}
        for i, (kind, ok) in enumerate([("recall", True), ("recall", False), ("update", True),
                                        ("update", True), ("recall", True)])
    ]
    path.write_text(json.dumps({"tinybench": rows}), encoding="utf-8")
    return path


def tiny_break(path: Path) -> tuple[str, str]:
    whole = json.loads(path.read_text(encoding="utf-8"))
    whole["tinybench"][1]["kind"] = "other"
    path.write_text(json.dumps(whole), encoding="utf-8")
    return "[1]", "kind"


@dataclass(frozen=True)
class Case:
    """One benchmark in the contract suite.

    Attributes:
        name: the registry key.
        sample: writes the small input to the given path and returns it.
        break_record: breaks one record of a written sample: ``(record, field)``.
        judge: overrides of a judged run (besides the fake server and the cache).
        reply: the fake judge's reply to a prompt, deterministic.
        figures: the figures of a summary that batch and realtime runs must share.
        needs_shared: the shared file the sample is cut from (skipped when absent).
        overrides: settings every job of the sample needs, from the sample's path (e.g. the
            dataset file a LongMemEval answer file is scored against).
        judge_run: where a summary keeps the judge run's ``counts`` and ``mode``.
    """

    name: str
    sample: Callable[[Path], Path]
    break_record: Callable[[Path], tuple[str, str]]
    judge: tuple[str, ...]
    reply: Callable[[RecordedRequest], Reply]
    figures: Callable[[dict[str, Any]], Any]
    needs_shared: Path | None = None
    overrides: Callable[[Path], tuple[str, ...]] = lambda path: ()
    judge_run: Callable[[dict[str, Any]], dict[str, Any]] = lambda summary: summary["judge"]


def _beam_reply(request: RecordedRequest) -> Reply:
    return Reply(text=json.dumps({"score": 1 if _split(request.prompt) else 0, "reason": "x"}))


def _plus_reply(request: RecordedRequest) -> Reply:
    label = "correct" if _split(request.prompt) else "wrong"
    return Reply(text=json.dumps({"label": label, "reason": "x"}))


def _lme_reply(request: RecordedRequest) -> Reply:
    return Reply(text="Yes." if _split(request.prompt) else "No.")


def _tiny_reply(request: RecordedRequest) -> Reply:
    label = "CORRECT" if _split(request.prompt) else "WRONG"
    return Reply(text=json.dumps({"label": label, "explanation": "x"}))


CASES = [
    Case("longmemeval", lme_sample, lme_break,
         ("benchmark=longmemeval", "judge=gpt-4o-mini", "judge.audit.n=0"), _lme_reply,
         lambda s: s["headline"]["figures"], LME_FILE, lme_overrides,
         lambda s: s["judge"]["settings"]),
    Case("beam", beam_sample, beam_break, ("judge=gpt-4o-mini", "judge.audit.n=0"),
         _beam_reply, lambda s: s["figures"], BEAM_FILE),
    Case("locomo_plus", plus_sample, plus_break, ("benchmark=locomo_plus",), _plus_reply,
         lambda s: s["readings"], PLUS_FILE),
    Case("tinybench", tiny_sample, tiny_break, ("judge=gpt-4o-mini", "judge.runs=1"), _tiny_reply,
         lambda s: s["accuracy"]),
]
"""Every pipeline benchmark (the registered ones and tinybench), in registry order."""
