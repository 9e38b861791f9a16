"""Invented BEAM files for the tests: mem0's layout built from made-up text (no BEAM excerpt)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from locomo_exp.config import DataConfig, ExperimentConfig, TrackingConfig

SHARED_BEAM = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "beam"
RESULTS_10M = SHARED_BEAM / "beam_10m_results.json"
PROBING_100K = SHARED_BEAM / "beam_100k_chat1_probing_questions.json"


def mem0_row(chat: int, position: int, ability: str, items: Sequence[float | None],
             *, tier: str = "100K", cutoffs: Sequence[str] = ("top_10",),
             answer: str = "An invented answer.") -> dict[str, Any]:
    """One row of mem0's layout with invented text and the given item verdicts per cutoff."""
    rubric = [f"the answer names invented fact {k}" for k in range(len(items))]
    nuggets = [{"nugget": r, "score": s, "reason": "made up"} for r, s in zip(rubric, items, strict=True)]
    scored = [s for s in items if isinstance(s, (int, float))]
    return {
        "question_id": f"{tier}_{chat}_q{position}_{ability}",
        "chat_size": tier,
        "conversation_idx": chat,
        "question_type": ability,
        "difficulty": "easy",
        "question": f"What invented thing number {position} happened?",
        "ground_truth_answer": " | ".join(rubric),
        "rubric": rubric,
        "cutoff_results": {
            cutoff: {
                "score": round(sum(scored) / len(scored), 4) if scored else 0.0,
                "generated_answer": answer,
                "nugget_scores": nuggets,
            }
            for cutoff in cutoffs
        },
    }


def mem0_file(path: Path, rows: list[dict[str, Any]], *, judge: str = "invented-judge",
              cutoffs: Sequence[str] = ("top_10",)) -> Path:
    """Write a mem0 BEAM file holding ``rows``; return its path."""
    path.write_text(json.dumps({
        "metadata": {"eval_type": "beam", "judge_model": judge, "top_k_cutoffs": list(cutoffs),
                     "project_name": "invented"},
        "metrics_by_cutoff": {},
        "evaluations": rows,
    }), encoding="utf-8")
    return path


def config(path: Path, **data: Any) -> ExperimentConfig:
    """A BEAM job's config: ``data.path`` = path, tracking off."""
    return ExperimentConfig(data=DataConfig(path=str(path), **data),
                            tracking=TrackingConfig(enabled=False))
