"""One ``judge.max_cost_usd`` over everything a job pays (issue 27 §1, second bullet).

The answers, the audit's controls, every panel member, batch mode and the LongMemEval job
count against the same cap. The fake servers bill every reply at the tokens they are told
to (``Reply(input_tokens=...)``): replies far dearer than the estimate let a job pass the
estimate check and meet the cap while it pays, at a known call. ``judge.max_concurrency=1``
makes the call at which the cap is met exact; the overshoot of a wider pool is measured in
``test_the_overshoot_is_at_most_one_concurrency_window``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE, Composer
from fake_anthropic import FakeAnthropicServer, Reply, make_judge_config
from judge_helpers import make_records
from lme_helpers import dataset_item, write_json, write_jsonl

from locomo_exp.config import JudgeBatchConfig, JudgeConfig, JudgeMode
from locomo_exp.experiment import run_experiment
from locomo_exp.judge import CallsStopped, run_judge
from locomo_exp.judge.models import model_price
from locomo_exp.judge.spend import usd
from locomo_exp.longmemeval_job import lme_judge_config, run_longmemeval

BIG = 42_000
"""Input tokens billed per reply: about 100 times what the estimate counts for a prompt."""
ANSWERS = 16
"""The example's questions in the judge's default categories 1-4 (one run each)."""


def _cost(cfg: JudgeConfig, input_tokens: int = BIG, output_tokens: int = 24) -> float:
    """USD of one reply at the model's list price."""
    price = model_price(cfg)
    assert price is not None
    return (input_tokens * price["input"] + output_tokens * price["output"]) / 1e6


def _job(tmp_path: Path, url: str, *extra: str) -> tuple[str, ...]:
    return (
        "scorer=judge", "judge.runs=1", "judge.max_concurrency=1", "judge.progress=false",
        "tracking=none", f"judge.base_url={url}", f"judge.cache_path={tmp_path / 'c.sqlite'}",
        f"data.path={EXAMPLE}", *extra,
    )


def _stopped_line(reason: str, made: int, left: int, total: int) -> str:
    return (
        f"judge stopped: {reason}; {made} calls made, {left} of {total} left; the verdicts paid "
        f"for are cached: once this is fixed, the same command pays only for the {left} left"
    )


def test_a_cap_the_answers_stay_under_stops_the_audit_naming_both_kinds_of_calls(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    # on 888aaa1 each part had its own cap: 16 answers and 9 controls, each under it, all paid
    fake_anthropic.responder = lambda request: Reply(input_tokens=BIG)
    cfg = typed_config(*_job(tmp_path, fake_anthropic.url, "judge.audit.n=3",
                             "judge.audit.max_share=null"))
    one = _cost(cfg.judge)
    cap = round((ANSWERS + 2.5) * one, 4)  # the answers fit; the audit's third control passes
    cfg = typed_config(*_job(tmp_path, fake_anthropic.url, "judge.audit.n=3",
                             "judge.audit.max_share=null", f"judge.max_cost_usd={cap}"))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(cfg, tmp_path / "out", tmp_path)

    paid = len(fake_anthropic.messages_requests())
    assert paid == ANSWERS + 3  # 18.5 calls' worth: the 19th call is the one that meets it
    error = stopped.value
    controls = error.calls_total - ANSWERS
    assert controls == 13
    reason = f"spend cap {usd(cap)} reached after {usd(paid * one)} paid (16 answer calls, 3 audit calls)"
    assert str(error) == _stopped_line(reason, paid, controls - 3, error.calls_total)
    assert "no call was made" not in str(error)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"]["judge"] == f"failed: {error}"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "- Judge: not run" not in report
    assert f"- Judge: did not finish (failed: {error})" in report


def test_the_audit_is_not_started_when_its_estimate_would_pass_what_is_left(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    """Before the audit's first call: paid + its estimate must fit, and the line says what was paid."""
    fake_anthropic.responder = lambda request: Reply(input_tokens=BIG)
    extra = ("judge.audit.n=3", "judge.audit.max_share=null")
    one = _cost(typed_config(*_job(tmp_path, fake_anthropic.url, *extra)).judge)
    # the answers fit, with 5% of a call left: more than one control's estimate (~1% of a
    # call), less than the 13 controls'
    cap = round(ANSWERS * one + 0.05 * one, 4)
    cfg = typed_config(*_job(tmp_path, fake_anthropic.url, *extra, f"judge.max_cost_usd={cap}"))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(cfg, tmp_path / "out", tmp_path)
    assert len(fake_anthropic.messages_requests()) == ANSWERS  # no control was sent
    line = str(stopped.value)
    assert line.startswith(
        f"judge stopped: spend cap {usd(cap)} would be passed: {usd(ANSWERS * one)} paid "
        "(16 answer calls); the 13 audit calls left are estimated at $"
    )
    assert line.endswith("16 calls made, 13 of 29 left; the verdicts paid for are cached: once "
                         "this is fixed, the same command pays only for the 13 left")


def test_a_panel_members_calls_count_against_the_cap(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.responder = lambda request: Reply(input_tokens=BIG)
    extra = ("judge.audit.n=0", "judge.panel=[haiku-4-5,sonnet-4-6]")
    base = typed_config(*_job(tmp_path, fake_anthropic.url, *extra))
    one = _cost(base.judge)  # sonnet-4-6, the main judge
    haiku = _cost(typed_config("judge=haiku-4-5").judge)
    cap = round(ANSWERS * one + 2.5 * haiku, 4)
    cfg = typed_config(*_job(tmp_path, fake_anthropic.url, *extra, f"judge.max_cost_usd={cap}"))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(cfg, tmp_path / "out", tmp_path)
    assert len(fake_anthropic.messages_requests()) == ANSWERS + 3
    reason = (
        f"spend cap {usd(cap)} reached after {usd(ANSWERS * one + 3 * haiku)} paid "
        "(16 answer calls, 3 panel calls)"
    )
    # the main judge's panel seat is the answers' calls (cache hits): 16 + 16 haiku in all
    assert str(stopped.value) == _stopped_line(reason, ANSWERS + 3, 13, 2 * ANSWERS)


def test_batch_mode_submits_no_batch_once_the_canary_shows_the_job_would_pass_the_cap(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer
) -> None:
    # on 888aaa1 batch mode checked the estimate once and submitted every batch
    records = make_records(16)
    fast = {"poll_interval_s": 0.01, "max_poll_interval_s": 0.01, "max_requests": 4}
    probe = make_judge_config(fake_anthropic, tmp_path, mode=JudgeMode.batch, runs=1,
                              batch=JudgeBatchConfig(**fast), dry_run=True)
    estimate = run_judge(records, probe, start_dir=tmp_path).dry_run_estimate
    assert estimate is not None and estimate["calls_to_make"] == 16
    per_call = estimate["estimated_cost_usd"] / 16  # at batch prices
    price = model_price(probe)
    assert price is not None
    canary_tokens = int(8 * per_call * 1e6 / price["input"])  # the canary costs ~8 batch calls
    canary = _cost(probe, canary_tokens)
    fake_anthropic.responder = lambda request: Reply(input_tokens=canary_tokens)
    cap = round(16.5 * per_call, 6)  # the estimate fits; canary + the 15 others do not
    cfg = make_judge_config(fake_anthropic, tmp_path, mode=JudgeMode.batch, runs=1,
                            batch=JudgeBatchConfig(**fast), max_cost_usd=cap)
    with pytest.raises(CallsStopped) as stopped:
        run_judge(records, cfg, start_dir=tmp_path)
    assert fake_anthropic.batch_create_requests() == []  # no batch created
    assert len(fake_anthropic.messages_requests()) == 1  # the canary alone
    line = str(stopped.value)
    assert line.startswith(
        f"judge stopped: spend cap {usd(cap)} would be passed: {usd(canary)} paid (1 answer "
        f"call); the 15 answer calls left to submit are estimated at ${15 * per_call:.4f}, "
        f"above the {usd(cap - canary)} left; no batch created for them; 1 call made, 15 of "
        "16 left"
    )


def test_the_longmemeval_job_counts_its_audit_against_the_cap(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    # on 888aaa1 the LongMemEval job's answers and controls were each capped on their own
    types = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")
    items = [dataset_item(f"q{i}", types[i % 4], answer=f"answer {i}") for i in range(8)]
    ref = write_json(tmp_path / "ref.json", items)
    hyp = write_jsonl(tmp_path / "h.jsonl",
                      [{"question_id": f"q{i}", "hypothesis": f"answer {i}"} for i in range(8)])
    fake_anthropic.responder = lambda request: Reply(text="yes", input_tokens=BIG)
    args = (
        "data=file", "tracking=none", "benchmark=longmemeval", "scorer=judge",
        f"data.path={hyp}", f"data.reference={ref}", f"judge.base_url={fake_anthropic.url}",
        "judge.progress=false", "judge.audit.n=2", "judge.max_concurrency=1",
        f"judge.cache_path={tmp_path / 'c.sqlite'}",
    )
    one = _cost(lme_judge_config(typed_config(*args).judge), output_tokens=24)
    cap = round(10.5 * one, 4)  # the 8 answers fit; the audit's third control passes the cap
    with pytest.raises(CallsStopped) as stopped:
        run_longmemeval(typed_config(*args, f"judge.max_cost_usd={cap}"), tmp_path / "out",
                        tmp_path)
    assert len(fake_anthropic.messages_requests()) == 11
    assert str(stopped.value).startswith(
        f"judge stopped: spend cap {usd(cap)} reached after {usd(11 * one)} paid (8 answer "
        "calls, 3 audit calls); 3 calls made"
    )
