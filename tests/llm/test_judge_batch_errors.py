"""Errors a batch reports are shown: one line per distinct error, with its count.

OpenAI's Batch API rejects a bad input file at validation: the batch ends ``failed`` with
an ``errors`` list and no output, and none of its requests ran. A request that ran and
failed is a line of the batch's error file. Both used to reach the user only as "API
errors" counts (the rejected batch even as "missing, submitted again by the next run").
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import RecordedRequest, Reply, verdict_responder
from fake_openai import FakeOpenAIServer, oa_error, openai_judge_config
from judge_helpers import make_records

from locomo_exp.judge import run_judge
from locomo_exp.llm.batch_plan import batch_error_lines
from locomo_exp.llm.messages import BatchItemResult

FAST_BATCH = {"poll_interval_s": 0.01, "max_poll_interval_s": 0.01, "canary": False}


def _batch_cfg(server: FakeOpenAIServer, tmp_path: Path) -> Any:
    return openai_judge_config(
        server, tmp_path, runs=1, mode="batch", max_error_rate=1.0, protocol="binary",
        batch=FAST_BATCH,
    )


def _batch_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records
        if r.levelno >= logging.ERROR and r.getMessage().startswith("judge batch:")
    ]


def test_a_batch_rejected_at_validation_says_each_error_once_with_its_count(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.reject_next_batch = [
        *({"code": "model_not_found", "message": "The model `gpt-x` does not exist", "line": i}
          for i in (1, 2, 3)),
        {"code": "invalid_json_line", "message": "This line is not parseable as valid JSON.",
         "line": 4},
    ]
    cfg = _batch_cfg(fake_openai, tmp_path)
    with caplog.at_level(logging.INFO):
        result = run_judge(make_records(4), cfg, start_dir=tmp_path)

    (batch_id,) = result.summary["batch"]["batch_ids"]
    prefix = f"judge batch: batch {batch_id} failed validation, none of its requests ran: "
    assert _batch_errors(caplog) == [
        prefix + "3 × model_not_found: The model `gpt-x` does not exist",
        prefix + "1 × invalid_json_line: This line is not parseable as valid JSON.",
    ]
    # errors of this run, never "missing ... submitted again" as if the API had lost them
    assert result.summary["batch"]["results"] == {
        "succeeded": 0, "errored": 4, "expired": 0, "canceled": 0, "missing": 0
    }
    assert result.summary["batch"]["errored_types"] == {"batch_failed": 4}
    assert result.summary["counts"]["api_error"] == 4
    assert not any("unfinished" in r.getMessage() for r in caplog.records)

    # once the cause is fixed, the same command submits them again and they are judged
    fake_openai.responder = verdict_responder(lambda item: True, "binary")
    again = run_judge(make_records(4), cfg, start_dir=tmp_path)
    assert again.summary["counts"]["valid"] == 4
    assert len(fake_openai.batch_create_requests()) == 2  # the rejected batch, then this one
    assert fake_openai.batch_requests_submitted() == 4  # answered: this one's only


def test_errored_lines_of_the_error_file_are_grouped_by_message(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    accept = verdict_responder(lambda item: True, "binary")

    def responder(request: RecordedRequest) -> Reply:
        prompt = json.dumps(request.body)
        if "week 1?" in prompt or "week 3?" in prompt:
            return oa_error(400, "Invalid 'messages[1].content': string too long.")
        if "week 5?" in prompt:
            return oa_error(400, "max_tokens is too large", code="invalid_value")
        return accept(request)

    fake_openai.responder = responder
    with caplog.at_level(logging.INFO):
        result = run_judge(make_records(8), _batch_cfg(fake_openai, tmp_path), start_dir=tmp_path)

    (batch_id,) = result.summary["batch"]["batch_ids"]
    assert _batch_errors(caplog) == [
        f"judge batch: 2 requests of batch {batch_id} errored: invalid_request_error: "
        "Invalid 'messages[1].content': string too long.",
        f"judge batch: 1 request of batch {batch_id} errored: invalid_value: "
        "max_tokens is too large",
    ]
    assert result.summary["counts"]["valid"] == 5
    assert result.summary["counts"]["api_error"] == 3


def test_error_lines_count_by_hand() -> None:
    items = [
        BatchItemResult("a", "errored", error_type="server_error", error_message="boom"),
        BatchItemResult("b", "succeeded"),
        BatchItemResult("c", "errored", error_type="rate_limit", error_message="slow down"),
        BatchItemResult("d", "errored", error_type="rate_limit", error_message="slow down"),
        BatchItemResult("e", "expired"),
        BatchItemResult("f", "errored", error_type="x"),
    ]
    assert batch_error_lines("b1", ["code: one", "code: two", "code: two"], items) == [
        "judge batch: batch b1 failed validation, none of its requests ran: 2 × code: two",
        "judge batch: batch b1 failed validation, none of its requests ran: 1 × code: one",
        "judge batch: 2 requests of batch b1 errored: rate_limit: slow down",
        "judge batch: 1 request of batch b1 errored: server_error: boom",
        "judge batch: 1 request of batch b1 errored: x",
    ]
    assert batch_error_lines("b1", [], [BatchItemResult("b", "succeeded")]) == []
