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
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, Composer
from fake_anthropic import FakeAnthropicServer, Reply, make_judge_config
from judge_helpers import make_records
from lme_helpers import dataset_item, write_json, write_jsonl

from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.benchmarks.longmemeval.judged import lme_judge_config
from locomo_exp.config import JudgeBatchConfig, JudgeConfig, JudgeMode
from locomo_exp.experiment import run_experiment
from locomo_exp.judge import CallsStopped, run_judge
from locomo_exp.judge.spend import usd
from locomo_exp.llm.models import model_price

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
    cap = round((ANSWERS + 2.5) * one, 4)  # the answers fit; a third control would pass it
    cfg = typed_config(*_job(tmp_path, fake_anthropic.url, "judge.audit.n=3",
                             "judge.audit.max_share=null", f"judge.max_cost_usd={cap}"))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(cfg, tmp_path / "out", tmp_path)

    paid = len(fake_anthropic.messages_requests())
    assert paid == ANSWERS + 2  # 18.5 calls' worth: a 19th call would pass it, is not sent
    error = stopped.value
    controls = error.calls_total - ANSWERS
    assert controls == 13
    reason = f"spend cap {usd(cap)} reached after {usd(paid * one)} paid (16 answer calls, 2 audit calls)"
    assert str(error) == _stopped_line(reason, paid, controls - 2, error.calls_total)
    assert "no call was made" not in str(error)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"]["judge"] == f"failed: {error}"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "- Judge: not run" not in report
    assert f"- Judge: did not finish (failed: {error})" in report


def test_the_audit_is_not_started_when_its_estimate_would_pass_what_is_left(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    """Before the audit's first call: paid + its estimate must fit; the line says what was paid."""
    extra = ("judge.audit.n=3", "judge.audit.max_share=null")
    dry = typed_config(*_job(tmp_path, fake_anthropic.url, *extra, "judge.dry_run=true"))
    estimate = run_experiment(dry, tmp_path / "dry", tmp_path).summary["judge"][
        "dry_run_estimate"]
    answers, audit = estimate["estimated_cost_usd"], estimate["audit_estimated_cost_usd"]
    assert fake_anthropic.messages_requests() == []
    # the answers cost what the whole job was estimated at: each reply bills this many tokens
    price = model_price(dry.judge)
    assert price is not None
    per_answer = (answers + audit) / ANSWERS
    tokens = int((per_answer * 1e6 - 24 * price["output"]) / price["input"])
    one = _cost(dry.judge, tokens)
    fake_anthropic.responder = lambda request: Reply(input_tokens=tokens)
    cap = round(ANSWERS * one + audit / 2, 4)  # the estimate fits, so does one more call
    assert answers + audit <= cap and ANSWERS * one + one <= cap
    cfg = typed_config(*_job(tmp_path, fake_anthropic.url, *extra, f"judge.max_cost_usd={cap}"))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(cfg, tmp_path / "out", tmp_path)
    assert len(fake_anthropic.messages_requests()) == ANSWERS  # no control was sent
    assert str(stopped.value) == _stopped_line(
        f"spend cap {usd(cap)} would be passed: {usd(ANSWERS * one)} paid (16 answer calls); "
        f"the 13 audit calls left are estimated at ${audit:.4f}, above the "
        f"{usd(cap - ANSWERS * one)} left", ANSWERS, 13, ANSWERS + 13)


def test_a_panel_members_calls_count_against_the_cap(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.responder = lambda request: Reply(input_tokens=BIG)
    extra = ("judge.audit.n=0", "judge.panel=[haiku-4-5,sonnet-4-6]")
    base = typed_config(*_job(tmp_path, fake_anthropic.url, *extra))
    one = _cost(base.judge)  # sonnet-4-6, the main judge
    haiku = _cost(typed_config("judge=haiku-4-5").judge)
    cap = round(ANSWERS * one + 4.5 * haiku, 4)  # a sonnet call is ~3 haiku calls: 16 fit
    cfg = typed_config(*_job(tmp_path, fake_anthropic.url, *extra, f"judge.max_cost_usd={cap}"))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(cfg, tmp_path / "out", tmp_path)
    assert len(fake_anthropic.messages_requests()) == ANSWERS + 4
    reason = (
        f"spend cap {usd(cap)} reached after {usd(ANSWERS * one + 4 * haiku)} paid "
        "(16 answer calls, 4 panel calls)"
    )
    # the main judge's panel seat is the answers' calls (cache hits): 16 + 16 haiku in all
    assert str(stopped.value) == _stopped_line(reason, ANSWERS + 4, 12, 2 * ANSWERS)


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
    canary_tokens = int(4 * per_call * 1e6 / price["input"])  # the canary costs ~4 batch calls
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
        "judge.progress=false", "judge.audit.n=2", "judge.audit.max_share=null",
        "judge.max_concurrency=1",
        f"judge.cache_path={tmp_path / 'c.sqlite'}",
    )
    one = _cost(lme_judge_config(typed_config(*args).judge), output_tokens=24)
    cap = round(10.5 * one, 4)  # the 8 answers fit; a third control would pass the cap
    with pytest.raises(CallsStopped) as stopped:
        run_longmemeval(typed_config(*args, f"judge.max_cost_usd={cap}"), tmp_path / "out",
                        tmp_path)
    assert len(fake_anthropic.messages_requests()) == 10
    assert str(stopped.value).startswith(
        f"judge stopped: spend cap {usd(cap)} reached after {usd(10 * one)} paid (8 answer "
        "calls, 2 audit calls); 2 calls made"
    )
    # a stopped judge writes nothing that could pass for a run (the pipeline's rule since
    # LongMemEval joined it, issue 26); the paid calls are cached for the next run
    assert not (tmp_path / "out" / "summary.json").exists()


@pytest.mark.parametrize("concurrency", [pytest.param(8, id="8"), pytest.param(32, id="32")])
def test_calls_of_one_cost_stop_under_the_cap_at_any_concurrency(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer, concurrency: int
) -> None:
    """Before each call: paid + it + the calls in flight, at the mean cost paid, must fit."""
    fake_anthropic.responder = lambda request: Reply(input_tokens=BIG)
    one = _cost(make_judge_config(fake_anthropic, tmp_path))
    cap = round(20.5 * one, 4)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, max_cost_usd=cap,
                            max_concurrency=concurrency)
    with pytest.raises(CallsStopped) as stopped:
        run_judge(make_records(100), cfg, start_dir=tmp_path)
    assert len(fake_anthropic.messages_requests()) == 20  # a 21st would pass it: not sent
    assert str(stopped.value).startswith(
        f"judge stopped: spend cap {usd(cap)} reached after {usd(20 * one)} paid "
        "(20 answer calls); 20 calls made, 80 of 100 left"
    )


@pytest.mark.parametrize("concurrency", [pytest.param(8, id="8"), pytest.param(32, id="32")])
def test_the_overshoot_is_at_most_one_concurrency_window(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer, concurrency: int
) -> None:
    """Calls of 10k-80k input tokens: those in flight may cost more than the mean paid so far."""
    def tokens(request: Any) -> int:
        return 10_000 + zlib.crc32(request.prompt.encode()) % 70_000  # fixed per prompt

    fake_anthropic.responder = lambda request: Reply(input_tokens=tokens(request))
    dearest = _cost(make_judge_config(fake_anthropic, tmp_path), 80_000)
    cap = round(10 * dearest, 4)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, max_cost_usd=cap,
                            max_concurrency=concurrency)
    with pytest.raises(CallsStopped):
        run_judge(make_records(100), cfg, start_dir=tmp_path)
    sent = fake_anthropic.messages_requests()
    paid = sum(_cost(cfg, tokens(r)) for r in sent)
    # the calls in flight are counted at the mean paid: a window of dearer ones passes the
    # cap, of cheaper ones stops under it; never more than one window either way
    assert paid - cap <= concurrency * dearest
    assert cap - paid <= concurrency * dearest
    assert len(sent) < 100  # stopped
