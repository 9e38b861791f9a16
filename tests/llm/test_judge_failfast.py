"""The judge fails fast and keeps what it paid for: unreachable endpoints, the error-rate
limit, whole-call deadlines, replies without a verdict, over-long prompts."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import pytest
from fake_anthropic import (
    FakeAnthropicServer,
    Reply,
    dripping,
    dropped,
    error,
    make_judge_config,
    rubric,
    server_error,
    text,
)
from judge_answer import judge_answer
from judge_helpers import make_records, query_cache_file

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.judge import JudgeFatalAPIError, run_judge
from locomo_exp.judge.calls import build_call_specs, verdict_reader
from locomo_exp.llm.errors import JudgeJobStopped
from locomo_exp.llm.pool import JudgePool
from locomo_exp.llm.providers.anthropic import AnthropicJudgeClient


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there any more


def run(records, cfg, tmp_path: Path):  # type: ignore[no-untyped-def]
    return run_judge(records, cfg, start_dir=tmp_path, category_names=DEFAULT_CATEGORY_NAMES)


# -- 1. unreachable endpoint -----------------------------------------------------------


def test_unreachable_endpoint_stops_after_one_call_with_one_line_naming_the_url(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    url = closed_port_url()
    cfg = make_judge_config(fake_anthropic, tmp_path, base_url=url, runs=10, max_retries=4)
    records = make_records(20)
    client = AnthropicJudgeClient(api_key="dummy-key-123", temperature=0.5, base_url=url)
    pool = JudgePool(client, cfg, None, reader=verdict_reader(cfg), stop_on_error_rate=True)
    specs = build_call_specs(records, cfg, api_version=client.api_version)
    with pytest.raises(JudgeJobStopped) as info:
        asyncio.run(pool.run(specs))
    message = str(info.value)
    assert pool.calls_made == 1  # not 200 x 5 attempts
    assert message.startswith(f"cannot connect to the judge API at {url} (")
    assert message.endswith("); check judge.base_url (or ANTHROPIC_BASE_URL) and the network")
    assert "\n" not in message and "dummy-key-123" not in message


def test_unreachable_endpoint_stops_run_judge_and_leaves_the_cache_empty(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    url = closed_port_url()
    cfg = make_judge_config(fake_anthropic, tmp_path, base_url=url, runs=3)
    with pytest.raises(JudgeJobStopped, match=f"cannot connect to the judge API at {url}"):
        run(make_records(5), cfg, tmp_path)
    assert query_cache_file(tmp_path / "judge_cache.sqlite", "SELECT COUNT(*) FROM judge_calls") == [
        (0,)
    ]


def test_consecutive_connection_failures_stop_the_job_at_the_configured_count(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(rubric(70))  # the first call works, then every connection drops
    fake_anthropic.responder = lambda request: dropped()
    cfg = make_judge_config(
        fake_anthropic,
        tmp_path,
        runs=1,
        max_concurrency=1,
        max_retries=10,
        max_consecutive_connection_errors=4,
    )
    with pytest.raises(JudgeJobStopped) as info:
        run(make_records(10), cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 1 + 4
    # our words and the count; the SDK's own text after "last:" varies between its versions
    message = str(info.value)
    head = f"cannot connect to the judge API at {fake_anthropic.url} (4 connection failures in a row, last: "
    tail = "); check judge.base_url (or ANTHROPIC_BASE_URL) and the network"
    assert message.startswith(head) and message.endswith(tail)
    assert message[len(head) : -len(tail)].strip()  # the SDK's reason, whatever its wording
    # the one completed call is kept
    assert query_cache_file(tmp_path / "judge_cache.sqlite", "SELECT COUNT(*) FROM judge_calls") == [
        (1,)
    ]


def test_a_dropped_first_connection_is_retried_not_fatal(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(dropped(), rubric(75))
    result = judge_answer("q", "a", "p", 4, cfg=make_judge_config(fake_anthropic, tmp_path))
    assert (result.outcome, result.score) == ("valid", 75.0)


def test_error_rate_stops_the_job_as_soon_as_it_can_no_longer_be_met(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda request: server_error()
    cfg = make_judge_config(
        fake_anthropic, tmp_path, runs=1, max_concurrency=1, max_retries=0, max_error_rate=0.1
    )
    with pytest.raises(JudgeJobStopped) as info:
        run(make_records(20), cfg, tmp_path)
    # 2 errors of 20 calls are allowed (0.1 x 20); the third makes 0.1 unreachable
    assert len(fake_anthropic.messages_requests()) == 3
    assert str(info.value) == (
        "judge API errors exceed judge.max_error_rate=0.1: 3 of 20 calls failed (at most 2 "
        "allowed; last: 500 server: Internal server error); stopped early, completed calls "
        "are cached: re-run the same command to resume"
    )


# -- 2. a deadline for the whole call ----------------------------------------------------


def test_a_dripping_reply_is_cut_at_the_total_timeout(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(dripping(0.05))  # ~200 bytes x 0.05 s = 10 s if waited for
    cfg = make_judge_config(fake_anthropic, tmp_path, timeout_s=0.3, max_retries=0)
    result = judge_answer("q", "a", "p", 4, cfg=cfg)
    assert result.outcome == "api_error"
    assert result.error == "timeout: no complete reply within judge.timeout_s=0.3 s"
    assert len(fake_anthropic.messages_requests()) == 1


def test_a_dripping_reply_is_retried_and_the_retry_succeeds(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(dripping(0.05), rubric(64))
    cfg = make_judge_config(fake_anthropic, tmp_path, timeout_s=0.3, max_retries=1)
    result = judge_answer("q", "a", "p", 4, cfg=cfg)
    assert (result.outcome, result.score) == ("valid", 64.0)


# -- 3. replies without a verdict --------------------------------------------------------

NO_VERDICT = [
    pytest.param(text("", "end_turn"), "end_turn", id="empty-end-turn"),
    pytest.param(text(None, "end_turn"), "end_turn", id="no-content"),
    pytest.param(text('{"score": 8', "max_tokens"), "max_tokens", id="max-tokens-cut"),
    pytest.param(text(None, "refusal"), "refusal", id="refusal"),
    pytest.param(text("I can't judge this.", "refusal"), "refusal", id="refusal-with-text"),
]


@pytest.mark.parametrize("reply, stop_reason", NO_VERDICT)
def test_reply_without_verdict_is_retried_once_and_the_retry_is_cached(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, reply: Reply, stop_reason: str
) -> None:
    fake_anthropic.script(reply, rubric(70))
    result = judge_answer("q", "a", "p", 4, cfg=make_judge_config(fake_anthropic, tmp_path))
    assert (result.outcome, result.score, result.stop_reason) == ("valid", 70.0, "end_turn")
    assert len(fake_anthropic.messages_requests()) == 2
    rows = query_cache_file(tmp_path / "judge_cache.sqlite", "SELECT stop_reason FROM judge_calls")
    assert rows == [("end_turn",)]


@pytest.mark.parametrize("reply, stop_reason", NO_VERDICT)
def test_reply_without_verdict_twice_is_unscored_with_reason_and_not_cached(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, reply: Reply, stop_reason: str
) -> None:
    fake_anthropic.script(reply, reply)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1)
    result = run(make_records(1), cfg, tmp_path)
    [outcome] = result.per_question["conv-1:0"].runs
    assert (outcome.outcome, outcome.score, outcome.stop_reason) == ("no_verdict", None, stop_reason)
    assert outcome.error.endswith(f"(stop_reason {stop_reason}) after 2 attempt(s); not cached")
    assert result.summary["counts"]["no_verdict"] == 1
    assert result.summary["counts"]["parse_failure"] == 0
    assert result.summary["j"]["overall"]["mean"] is None
    row = result.question_json("conv-1:0")["j_runs"][0]
    assert (row["outcome"], row["stop_reason"]) == ("no_verdict", stop_reason)
    assert query_cache_file(tmp_path / "judge_cache.sqlite", "SELECT COUNT(*) FROM judge_calls") == [
        (0,)
    ]
    # a re-run asks again (and now gets a verdict)
    fake_anthropic.clear()
    again = run(make_records(1), cfg, tmp_path)
    assert again.per_question["conv-1:0"].mean_score == 80.0
    assert len(fake_anthropic.messages_requests()) == 1


def test_stop_reason_of_every_run_is_in_the_question_json(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(rubric(60), text('{"score": 90, "explanation": "cut', "max_tokens"))
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2, max_concurrency=1)
    result = run(make_records(1), cfg, tmp_path)
    runs = result.question_json("conv-1:0")["j_runs"]
    assert [(r["score"], r["stop_reason"]) for r in runs] == [(60.0, "end_turn"), (90.0, "max_tokens")]
    assert result.summary["stop_reasons"] == {"end_turn": 1, "max_tokens": 1}


# -- 4. one oversized answer -------------------------------------------------------------

TOO_LONG = "prompt is too long: 212345 tokens > 200000 maximum"


def test_prompt_too_long_is_that_questions_error_and_the_rest_is_judged(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    records = make_records(6)

    def respond(request):  # type: ignore[no-untyped-def]
        if "picture number 3" in request.prompt:
            return error(400, TOO_LONG, "invalid_request_error")
        return rubric(70)

    fake_anthropic.responder = respond
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    with caplog.at_level(logging.WARNING, logger="locomo_exp.judge"):
        result = run(records, cfg, tmp_path)
    bad = result.per_question["conv-1:3"]
    assert bad.mean_score is None and bad.api_errors == 2
    assert bad.runs[0].error == f"400 prompt_too_long: {TOO_LONG}"
    assert result.summary["prompt_too_long_questions"] == ["conv-1:3"]
    assert result.summary["counts"]["prompt_too_long"] == 2
    assert result.summary["api_error_rate"] == 0.0
    assert not result.error_rate_exceeded
    assert result.summary["j"]["overall"]["count"] == 5
    assert result.summary["j"]["overall"]["mean"] == 70.0
    assert len(fake_anthropic.messages_requests()) == 12  # a 400 is not retried
    assert (
        "the API rejected the prompt as too long for 1 question, J n/a: conv-1:3" in caplog.text
    )


def test_other_400_stays_fatal_at_first_occurrence(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda request: error(
        400, "messages: field required", "invalid_request_error"
    )
    with pytest.raises(JudgeFatalAPIError, match="messages: field required"):
        run(make_records(6), make_judge_config(fake_anthropic, tmp_path, runs=2), tmp_path)
    assert len(fake_anthropic.messages_requests()) == 1


def test_report_judge_section_names_prompt_too_long_questions_and_no_verdicts() -> None:
    from locomo_exp.report import render_reliability
    from locomo_exp.results import JudgeSummary, Reliability

    reliability = Reliability(krippendorff_alpha=0.8, level="interval", unanimous_share=0.5, questions=4)
    judge = JudgeSummary.from_json({
        "counts": {"parse_failure": 0, "api_error": 2, "no_verdict": 1},
        "prompt_too_long_questions": ["conv-1:3"],
    })
    lines = render_reliability(reliability, judge).splitlines()
    assert "- Replies without a verdict (empty, cut, refused; not cached): 1" in lines
    assert "- Prompt too long for the API (J n/a): conv-1:3" in lines
