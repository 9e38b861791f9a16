"""Shared paths and tiny LongMemEval files for the LongMemEval tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_DATA

LME_DIR = SHARED_DATA / "longmemeval"
REFERENCE = LME_DIR / "longmemeval_reference.json"
GPT4O = LME_DIR / "memory-agents" / "my_predictions.jsonl.eval-results-gpt-4o"
HYPOTHESES = LME_DIR / "memory-agents" / "my_predictions.jsonl"
HUNK_MINI = (
    LME_DIR
    / "hunk0724"
    / "longmemeval_oracle.json_testlog_top1000context_jsonformat_useronlyfalse_20251214-0748"
    ".jsonl.eval-results-gpt-4o-mini"
)


def need_shared() -> None:
    """Skip when the shared LongMemEval files are absent."""
    if not REFERENCE.is_file():
        pytest.skip(f"shared LongMemEval data not found at {LME_DIR}")


def dataset_item(qid: str, qtype: str, answer: Any = "yes", sessions: int = 0) -> dict[str, Any]:
    """One dataset item in LongMemEval's layout with ``sessions`` small haystack sessions."""
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": f"question {qid}?",
        "answer": answer,
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": [f"s{i}" for i in range(sessions)],
        "haystack_dates": ["2023/05/20 (Sat) 02:21"] * sessions,
        "haystack_sessions": [
            [{"role": "user", "content": "hello " * 5}, {"role": "assistant", "content": "hi"}]
        ] * sessions,
        "answer_session_ids": [f"s{i}" for i in range(min(sessions, 1))],
    }


def write_json(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj))
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
