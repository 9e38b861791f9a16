"""The Anthropic boundary: the request built, and what the (fake) API actually received."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_anthropic import FAKE_API_KEY, FakeAnthropicServer, Reply, make_judge_config, rubric
from judge_answer import judge_answer

from locomo_exp.llm.messages import JudgeReply, JudgeRequest, parse_retry_after
from locomo_exp.llm.providers.anthropic import (
    SDK_DEFAULT_API_VERSION,
    TEMPERATURE_API_VERSION,
    api_version_for,
    build_request_body,
)


def test_request_body_puts_temperature_in_body_with_2023_version() -> None:
    request = JudgeRequest("claude-sonnet-4-6", "sys", "prompt", 256, 0.5, {"type": "object"})
    assert build_request_body(request) == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 256,
        "system": "sys",
        "messages": [{"role": "user", "content": "prompt"}],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
        "temperature": 0.5,
    }
    assert api_version_for(request.temperature) == "2023-06-01"


def test_request_body_without_temperature_or_schema_adds_nothing() -> None:
    body = build_request_body(JudgeRequest("claude-sonnet-4-6", "sys", "prompt", 256))
    assert set(body) == {"model", "max_tokens", "system", "messages"}


def test_api_version_depends_only_on_whether_a_temperature_is_sent() -> None:
    assert api_version_for(0.0) == TEMPERATURE_API_VERSION
    assert api_version_for(None) == SDK_DEFAULT_API_VERSION != TEMPERATURE_API_VERSION


@pytest.mark.parametrize(
    "headers, expected",
    [
        pytest.param({"retry-after": "3"}, 3.0, id="seconds"),
        pytest.param({"retry-after": "0.25"}, 0.25, id="fractional"),
        pytest.param({"retry-after-ms": "1500", "retry-after": "9"}, 1.5, id="ms-wins"),
        pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0, id="past-date"),
        pytest.param({"retry-after": "soon"}, None, id="garbage"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_retry_after_header_is_read_in_seconds(headers: dict[str, str], expected: object) -> None:
    assert parse_retry_after(headers) == expected


def test_call_sends_model_temperature_max_tokens_and_2023_api_version(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(rubric(90))
    result = judge_answer(
        "Where did Ann move?",
        "Berlin",
        "She moved to Berlin.",
        4,
        cfg=make_judge_config(fake_anthropic, tmp_path),
    )
    assert result.score == 90.0 and result.outcome == "valid"
    [request] = fake_anthropic.messages_requests()
    assert request.body["model"] == "claude-sonnet-4-6"
    assert request.body["temperature"] == 0.5
    assert request.body["max_tokens"] == 256
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body["output_config"]["format"]["type"] == "json_schema"
    assert "Berlin" in request.prompt and "She moved to Berlin." in request.prompt
    assert request.headers.get("authorization") == f"Bearer {FAKE_API_KEY}" or (
        request.headers.get("x-api-key") == FAKE_API_KEY
    )
    assert request.headers["x-stainless-retry-count"] == "0"


def test_null_temperature_sends_none_and_keeps_sdk_default_version(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    judge_answer(
        "q", "a", "a", 4, cfg=make_judge_config(fake_anthropic, tmp_path, temperature=None)
    )
    [request] = fake_anthropic.messages_requests()
    assert "temperature" not in request.body
    assert request.headers["anthropic-version"] == SDK_DEFAULT_API_VERSION


def test_structured_output_can_be_switched_off(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    judge_answer(
        "q", "a", "a", 4, cfg=make_judge_config(fake_anthropic, tmp_path, structured_output=False)
    )
    assert "output_config" not in fake_anthropic.messages_requests()[0].body


def test_fake_server_rejects_temperature_on_the_new_api_version(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    """Guards the fake itself: it must behave like the API for the tests above to mean anything."""
    import anthropic

    client = anthropic.Anthropic(base_url=fake_anthropic.url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="temperature"):
        client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=10,
            messages=[{"role": "user", "content": "x"}],
            extra_body={"temperature": 0.5},
        )
    client.close()


def test_judge_calls_are_not_opentelemetry_spans() -> None:
    # the SDK would build a span (and its attributes) per call for no consumer
    from locomo_exp.llm.providers.anthropic import AnthropicJudgeClient

    client = AnthropicJudgeClient(api_key=FAKE_API_KEY, temperature=0.0)
    option = getattr(client._client, "open_telemetry", None)
    if option is None:
        pytest.skip("this anthropic SDK has no OpenTelemetry option")
    assert option["traces"]["enabled"] is False


def _complete(server: FakeAnthropicServer, temperature: float | None = 0.0) -> JudgeReply:
    import asyncio

    from locomo_exp.llm.providers.anthropic import AnthropicJudgeClient

    async def go() -> JudgeReply:
        client = AnthropicJudgeClient(
            api_key=FAKE_API_KEY, temperature=temperature, base_url=server.url
        )
        try:
            return await client.complete(
                JudgeRequest("claude-sonnet-4-6", "sys", "prompt", 64, temperature)
            )
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_realtime_reply_is_read_from_the_json_body(fake_anthropic: FakeAnthropicServer) -> None:
    # two text blocks and a tool block: the text blocks joined, usage and the request id kept
    fake_anthropic.script(
        Reply(
            body={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [
                    {"type": "text", "text": '{"score": '},
                    {"type": "tool_use", "id": "t", "name": "x", "input": {}},
                    {"type": "text", "text": "70}"},
                ],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 321, "output_tokens": 9},
            }
        )
    )
    reply = _complete(fake_anthropic)
    assert reply.text == '{"score": 70}'
    assert (reply.input_tokens, reply.output_tokens) == (321, 9)
    assert reply.stop_reason == "end_turn" and reply.model == "claude-sonnet-4-6"
    assert reply.request_id is not None and reply.request_id.startswith("req_fake_")
    [request] = fake_anthropic.messages_requests()
    assert request.path.endswith("/v1/messages")
    assert request.body["temperature"] == 0.0
    assert request.headers["anthropic-version"] == TEMPERATURE_API_VERSION


def test_a_200_whose_body_is_not_json_is_a_retryable_invalid_response(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    from locomo_exp.llm.errors import JudgeCallError

    fake_anthropic.script(Reply(body=b"<html>gateway</html>", content_type="text/html"))
    with pytest.raises(JudgeCallError) as caught:
        _complete(fake_anthropic)
    assert caught.value.kind == "invalid_response" and caught.value.retryable


def test_reply_fields_missing_from_the_json_count_as_empty(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.script(Reply(body={"type": "message", "content": None}))
    reply = _complete(fake_anthropic, temperature=None)
    assert (reply.text, reply.input_tokens, reply.output_tokens, reply.model) == ("", 0, 0, "")
    assert reply.stop_reason is None
