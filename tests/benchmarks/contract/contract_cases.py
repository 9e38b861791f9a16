"""One small input sample per pipeline benchmark, built in tmp_path, and how to judge it.

BEAM's, LoCoMo-Plus's and LongMemEval's samples are cut from the shared real files (never
copied into the project), LoCoMo's from the project's example; tinybench's is made up. Each case names what the contract suite needs: the sample,
its judge overrides, a deterministic reply per prompt, a record to break and its field.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import EXAMPLE, SHARED_DATA
from fake_server import RecordedRequest, Reply

from locomo_exp.tracking.headline import headline_metrics

BEAM_FILE = SHARED_DATA / "beam" / "beam_10m_results.json"
PLUS_FILE = SHARED_DATA / "locomo_plus" / "kumiho" / "all_results.json"
LME_FILE = SHARED_DATA / "longmemeval" / "memory-agents" / "my_predictions.jsonl.eval-results-gpt-4o"
LME_REFERENCE = SHARED_DATA / "longmemeval" / "longmemeval_reference.json"
TINY_DIR = Path(__file__).resolve().parent


def with_tinybench(plugins: tuple[str, ...]) -> tuple[str, ...]:
    """The registry with tinybench's one line, before LoCoMo's (the default claims the rest)."""
    return (*plugins[:-1], "tinybench", plugins[-1])


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


def locomo_sample(path: Path) -> Path:
    """The project's example (``qa_results`` layout), every other question: 10 questions,
    two of each category 1-5."""
    rows = json.loads(EXAMPLE.read_text(encoding="utf-8"))[::2]
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path


def locomo_break(path: Path) -> tuple[str, str]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows[3]["category"] = 9
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return "[3]", "category"


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
        benchmark: the benchmark a saved ``summary.json`` names (LoCoMo's: its run log's).
        records_first: a recorded job (LoCoMo's): its F1 record is written before the judge
            is paid, so a run cut by Ctrl-C or left with a batch pending leaves a
            ``summary.json`` whose status says the judge did not finish, and a pending run
            prints ``F1 outputs: <dir>`` (others write nothing and print ``No outputs yet``).
        extra_outputs: files the plain job writes besides the five outputs and the
            ``questions.html`` of steps that map rows to questions (LoCoMo's steps write
            their own ``questions.html``, a plot and the HTML report).
        run_name: the MLflow run's default name for a judged run of the sample, else
            ``<file stem> · <name>``.
        logged_metrics: the job's metrics its MLflow run holds as metrics (LoCoMo's: the
            headline, :func:`locomo_exp.tracking.headline_metrics`; the rest are its
            ``metrics.json`` artifact), else all.
        benchmark_tag: whether its MLflow runs carry a ``benchmark`` tag (LoCoMo's carry
            none, as before it was registered: a run without one is LoCoMo's).
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
    benchmark: Callable[[dict[str, Any]], str] = lambda summary: summary["benchmark"]
    records_first: bool = False
    extra_outputs: tuple[str, ...] = ()
    run_name: Callable[[Path], str] | None = None
    logged_metrics: Callable[[dict[str, float]], dict[str, float]] = lambda metrics: metrics
    benchmark_tag: bool = True


def _beam_reply(request: RecordedRequest) -> Reply:
    return Reply(text=json.dumps({"score": 1 if _split(request.prompt) else 0, "reason": "x"}))


def _plus_reply(request: RecordedRequest) -> Reply:
    label = "correct" if _split(request.prompt) else "wrong"
    return Reply(text=json.dumps({"label": label, "reason": "x"}))


def _lme_reply(request: RecordedRequest) -> Reply:
    return Reply(text="Yes." if _split(request.prompt) else "No.")


def _locomo_reply(request: RecordedRequest) -> Reply:
    return Reply(text=json.dumps({"score": 90 if _split(request.prompt) else 10,
                                  "explanation": "x"}))


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
    Case("locomo", locomo_sample, locomo_break,
         ("judge=gpt-4o-mini", "judge.runs=1", "judge.min_successful_runs=1", "judge.audit.n=0"),
         _locomo_reply, lambda s: s["metrics"],
         benchmark=lambda s: s["run_log"]["benchmark"], records_first=True,
         extra_outputs=("category_scores.png", "questions.html", "report.html"),
         run_name=lambda data: f"{data.stem} · judge · gpt-4o-mini-2024-07-18",
         logged_metrics=headline_metrics, benchmark_tag=False),
]
"""Every pipeline benchmark (the registered ones, tinybench before LoCoMo), in registry order."""
