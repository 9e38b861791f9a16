"""A LongMemEval run obeys what a LoCoMo run obeys (issue 26): the spend cap before any
removal, the audit's share of the calls, and several runs of a yes/no judge (issue 27)."""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from fake_anthropic import judged_item, text
from lme_helpers import dataset_item, write_json, write_jsonl

from locomo_exp.benchmarks.longmemeval.compare import compare_lme_runs
from locomo_exp.benchmarks.longmemeval.job import run_longmemeval

TYPES = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")


def _files(tmp_path: Path, n: int = 8) -> tuple[Path, Path]:
    """``n`` questions over four types, with stored verdicts (right for even ids)."""
    items = [dataset_item(f"q{i}", TYPES[i % 4], answer=f"answer {i}") for i in range(n)]
    ref = write_json(tmp_path / "ref.json", items)
    hyp = write_jsonl(tmp_path / "h.jsonl", [
        {"question_id": f"q{i}", "hypothesis": "good" if i % 2 == 0 else "bad",
         "autoeval_label": {"model": "gpt-4o", "label": i % 2 == 0}}
        for i in range(n)
    ])
    return ref, hyp


def _snapshot(run_dir: Path) -> dict[str, tuple[bytes, int]]:
    """The run's own files (not Hydra's ``.hydra/``): content and modification time (ns)."""
    return {
        str(p.relative_to(run_dir)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and ".hydra" not in p.parts
    }


@pytest.mark.slow
def test_the_spend_cap_refuses_before_an_overwritten_run_is_removed(tmp_path, fake_anthropic):
    ref, hyp = _files(tmp_path)
    data = ("data=file", "tracking=none", f"data.path={hyp}", f"data.reference={ref}",
            "hydra.run.dir=out")
    first = run_cli(*data, cwd=tmp_path)  # a finished run of the stored verdicts
    assert first.returncode == 0, first.stderr
    before = _snapshot(tmp_path / "out")
    assert {"summary.json", "report.md", "scores.jsonl", "card.json"} <= set(before)
    done = run_cli(
        *data, "benchmark=longmemeval", "scorer=judge", "overwrite=true",
        "judge.max_cost_usd=0.000001", "judge.progress=false", cwd=tmp_path, server=fake_anthropic,
    )
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()  # one line, naming the cap; nothing logged before it
    assert line.startswith("error: judge.max_cost_usd=1e-06: the 8 calls to make are estimated at $")
    assert "above the cap; no call was made" in line
    assert _snapshot(tmp_path / "out") == before  # the old run is untouched
    assert fake_anthropic.messages_requests() == []


def _judged(typed_config: Any, tmp_path: Path, fake: Any, n: int, *extra: str) -> Any:
    ref, hyp = _files(tmp_path, n)
    cfg = typed_config(
        "data=file", "tracking=none", "benchmark=longmemeval", "scorer=judge",
        f"data.path={hyp}", f"data.reference={ref}", f"judge.base_url={fake.url}",
        "judge.progress=false", *extra,
    )
    return run_longmemeval(cfg, tmp_path / "out", tmp_path)


CAPPED = (
    "each control judged 1x (judge.audit.runs); capped at 25% of the 16 answer calls "
    "(judge.audit.max_share; null for no cap): 1 control(s) per kind instead of judge.audit.n=50"
)


def test_the_audit_is_capped_by_its_share_of_the_answer_calls(
    typed_config, tmp_path, fake_anthropic, caplog
):
    """16 answers, one run each: at most 25% of 16 = 4 audit calls, so 1 control per kind."""
    fake_anthropic.responder = lambda request: text("yes")
    caplog.set_level("INFO")
    result = _judged(typed_config, tmp_path, fake_anthropic, 16)
    assert len(fake_anthropic.messages_requests()) == 16 + 3  # before: 16 + 48
    audit = result.summary["audit"]
    assert {kind: row["n"] for kind, row in audit["kinds"].items()} == {
        "gold_as_answer": 1, "other_gold": 1, "non_answer": 1}
    assert audit["sizing"] == CAPPED
    assert f"judge audit: 3 controls x 1 run(s) = 3 extra judge calls (19% of the 16 calls for " \
        f"the answers); {CAPPED}" in caplog.messages  # LoCoMo's words (trust/plan.py)
    assert f"Audit size: {CAPPED}." in (result.output_dir / "report.md").read_text()


def test_the_audit_cap_is_lifted_with_null_and_counted_in_a_dry_run(
    typed_config, tmp_path, fake_anthropic
):
    fake_anthropic.responder = lambda request: text("yes")
    lifted = _judged(typed_config, tmp_path, fake_anthropic, 16, "judge.audit.max_share=null")
    assert len(fake_anthropic.messages_requests()) == 16 + 48
    assert lifted.summary["audit"]["sizing"] == (
        "each control judged 1x (judge.audit.runs); no cap (judge.audit.max_share=null)")
    (tmp_path / "dry").mkdir()
    dry = _judged(typed_config, tmp_path / "dry", fake_anthropic, 16, "judge.dry_run=true",
                  "judge.cache=false")
    estimate = dry.summary["judge"]["dry_run_estimate"]
    assert (estimate["audit_calls_to_make"], estimate["audit_sizing"]) == (3, CAPPED)
    assert estimate["total_calls_to_make"] == 19


def test_a_small_run_whose_cap_leaves_no_control_says_why(typed_config, tmp_path, fake_anthropic):
    """8 answers: 25% is 2 calls, fewer than one control for each of the 3 kinds."""
    fake_anthropic.responder = lambda request: text("yes")
    result = _judged(typed_config, tmp_path, fake_anthropic, 8)
    assert len(fake_anthropic.messages_requests()) == 8  # before: 8 + 24
    assert result.summary["audit"] == {
        "kinds": {},
        "sizing": "each control judged 1x (judge.audit.runs); capped at 25% of the 8 answer calls "
        "(judge.audit.max_share; null for no cap): 0 control(s) per kind instead of "
        "judge.audit.n=50",
    }
    assert "No control was judged: each control judged 1x" in (result.output_dir / "report.md").read_text()


RUN_REPLIES = {  # question -> the judge's reply to its first and second run
    "q0": ("yes", "no"), "q1": ("yes", "yes"), "q2": ("no", "no"), "q3": ("no", "yes"),
    "q4": ("yes", "yes"), "q5": ("yes", "no"), "q6": ("yes", "no"), "q7": ("yes", "no"),
}


def test_several_runs_of_the_yes_no_judge_count_a_split_question_half(
    typed_config, tmp_path, fake_anthropic
):
    """judge.runs=2: a question's verdict is the mean of its runs, the accuracy their mean.

    Per type (two questions each): single-session-user 0.5 + 1 = 1.5, multi-session 1 + 0.5,
    temporal-reasoning 0 + 0.5, knowledge-update 0.5 + 0.5: overall 4.5 / 8 = 0.5625 (a split
    question counted as a yes, as before, gave 7 / 8 = 0.875).
    """
    lock, seen = threading.Lock(), Counter[str]()

    def alternate(request: Any) -> Any:
        qid = judged_item(request).question.removeprefix("question ").rstrip("?")
        with lock:
            reply = RUN_REPLIES[qid][seen[qid]]
            seen[qid] += 1
        return text(reply)

    fake_anthropic.responder = alternate
    result = _judged(typed_config, tmp_path, fake_anthropic, 8, "judge.runs=2",
                     "judge.audit.n=0")
    assert seen == dict.fromkeys(RUN_REPLIES, 2)
    figures = result.summary["headline"]["figures"]
    assert (figures["overall"]["correct"], figures["overall"]["n"]) == (4.5, 8)
    assert figures["overall"]["accuracy"] == 0.5625
    low, high = _wilson_by_hand(4.5, 8)
    assert figures["overall"]["ci_low"] == pytest.approx(low, abs=1e-12)
    assert figures["overall"]["ci_high"] == pytest.approx(high, abs=1e-12)
    assert {t: row["accuracy"] for t, row in figures["per_type"].items() if row["n"]} == {
        "single-session-user": 0.75, "multi-session": 0.75, "temporal-reasoning": 0.25,
        "knowledge-update": 0.5,
    }
    assert figures["task_avg"]["accuracy"] == 0.5625
    rows = {r["question_id"]: r for r in map(json.loads, (tmp_path / "out" / "scores.jsonl").open())}
    assert [rows[f"q{i}"]["j_mean"] for i in range(8)] == [50, 100, 0, 50, 100, 50, 50, 50]
    assert result.metrics["lme_j/overall"] == pytest.approx(56.25)
    # against the stored verdicts (right for even ids) a question is a yes at >= half its runs
    agreement = result.summary["judge"]["agreement_with_stored"]
    assert (agreement["n"], agreement["stored_no_judge_yes"], agreement["stored_yes_judge_no"]) \
        == (8, 4, 1)
    # mode=compare against the file's stored verdicts (4 / 8): the run's own 56.25, McNemar
    # on yes/no at half the runs (judge yes, stored no: q1 q3 q5 q7; stored yes, judge no: q2)
    stored_cfg = typed_config("data=file", "tracking=none", f"data.path={tmp_path / 'h.jsonl'}",
                              f"data.reference={tmp_path / 'ref.json'}")
    run_longmemeval(stored_cfg, tmp_path / "stored", tmp_path)
    (pair,) = compare_lme_runs([tmp_path / "out", tmp_path / "stored"], bootstrap_samples=200)
    overall = pair.rows[0]
    assert (overall.figure, overall.a, overall.b) == ("overall", 0.5625, 0.5)
    assert overall.diff == pytest.approx(6.25) and overall.discordant == (4, 1)


def _wilson_by_hand(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson (1927) at p = k / n: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)
