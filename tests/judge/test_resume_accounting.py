"""A resumed job's tokens and cost, this run and in all; a repeated prompt is not "another process".

Trial 4, finding 12: after a resume a job's cost counted only the new calls ($1.168 against
$5.419 for the same work in another job); the resume logged "27 call(s) were in flight in
another process", which were prompts repeated within the job (LoCoMo has duplicate
questions), judged once and read back from the cache.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, accept_all

from locomo_exp import sweep


def _judge(run_judged, out: str, path: Path):  # type: ignore[no-untyped-def]
    return run_judged(
        "scorer=judge", "data=file", f"data.path={path}", "judge.runs=1", "judge.audit.n=0", out=out
    )


def _answers(tmp_path: Path) -> Path:
    rows = [
        {"question_id": f"q{i}", "conversation_id": "c1", "question": f"What is {i % 3}?",
         "ground_truth": f"thing {i % 3}", "predicted_answer": f"thing {i % 3}", "category": 4}
        for i in range(6)
    ]  # 6 questions, 3 distinct prompts: each repeated once
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(rows))
    return path


def test_a_repeated_prompt_is_judged_once_and_not_called_another_process(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, run_judged,  # type: ignore[no-untyped-def]
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_anthropic.responder = accept_all()
    with caplog.at_level(logging.INFO):
        result = _judge(run_judged, "out", _answers(tmp_path))
    counts = result.summary["judge"]["counts"]
    assert (counts["calls_made"], counts["cache_hits"]) == (3, 3)
    assert len(fake_anthropic.messages_requests()) == 3
    assert "in flight in another process" not in caplog.text
    assert (
        "3 calls made, 3 cache hits (3 calls repeat an identical prompt of this job: judged "
        "once, the repeat read from the cache)"
    ) in caplog.text


def test_a_run_from_the_cache_shows_this_runs_cost_and_the_cost_in_all(
    fake_anthropic: FakeAnthropicServer, run_judged,  # type: ignore[no-untyped-def]
) -> None:
    fake_anthropic.responder = accept_all()
    from conftest import EXAMPLE

    first = _judge(run_judged, "first", EXAMPLE)
    again = _judge(run_judged, "again", EXAMPLE)  # all cached
    paid, cached = first.summary["judge"], again.summary["judge"]
    assert cached["counts"]["calls_made"] == 0 and cached["estimated_cost_usd"] == 0.0
    assert paid["estimated_cost_usd"] > 0
    # in all: the same work costs the same, whichever run paid for it
    assert cached["estimated_cost_usd_including_cached"] == pytest.approx(
        paid["estimated_cost_usd"], abs=1e-6
    )
    assert cached["trust"]["total_cost_including_cached_usd"] == pytest.approx(
        paid["trust"]["total_cost_usd"], abs=1e-6
    )
    report = (again.output_dir / "report.md").read_text()
    tokens = paid["tokens"]
    assert (
        f"Tokens: 0 in, 0 out (this run); in all, with {cached['counts']['cache_hits']} cached "
        f"call(s): {tokens['input']} in, {tokens['output']} out;"
    ) in report
    assert "In all, with the calls answered from the cache" in report
    record = sweep.JobRecord(job=0, overrides=[], swept={}, run_name="x",
                             status=sweep.COMPLETED, output_dir=str(again.output_dir))
    row = sweep.summary_row(record, again.summary)
    status, token_cells, cost = sweep.summary._spending_cells(row)
    assert token_cells == [f"0 (in all {tokens['input']})", f"0 (in all {tokens['output']})"]
    assert cost == f"0.0000 (in all {paid['trust']['total_cost_usd']:.4f})"
