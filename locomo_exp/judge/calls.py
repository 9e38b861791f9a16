"""Judge calls: one :class:`CallSpec` per (question, run), and replies turned into results.

Building a request is separate from sending it (:mod:`locomo_exp.llm.pool`,
:mod:`locomo_exp.llm.batch`): a spec holds the request and its cache key;
:func:`result_from_reply` parses a reply (fresh or cached) into a valid or unscored
:class:`~locomo_exp.judge.aggregate.JudgeResult`, and :class:`VerdictReader` is how the
runtime does so (it knows no verdicts: it is handed the reader).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.protocols import ProtocolSpec, get_protocol, protocol_spec
from locomo_exp.judge.protocols.template import template_card
from locomo_exp.llm.cache import CacheKey
from locomo_exp.llm.calls import CallSpec
from locomo_exp.llm.messages import JudgeReply, JudgeRequest
from locomo_exp.llm.models import uses_structured_output
from locomo_exp.llm.providers import cache_endpoint
from locomo_exp.results import QARecord


def build_call_specs(
    records: list[QARecord], cfg: JudgeConfig, *, api_version: str,
    prompts: Mapping[str, str] | None = None,
) -> list[CallSpec]:
    """One :class:`CallSpec` per record and run, question-major (q0 r0..rN, q1 r0..).

    Args:
        records: records to judge (already filtered by category).
        cfg: the judge config.
        api_version: the ``anthropic-version`` the calls carry.
        prompts: user messages already built for these records with this ``cfg``, by
            question id (:func:`~locomo_exp.judge.preflight.preflight_judge` returns them);
            a record not in it has its prompt built here. Same bytes either way.

    Returns:
        The call specs.
    """
    spec = protocol_spec(cfg)
    schema = spec.output_schema if uses_structured_output(cfg) else None
    if spec.response_format is not None:  # a template asks for its own reply format
        schema = spec.output_schema if spec.response_format == "json_schema" else None
    template = template_card(spec)
    temperature = None if cfg.temperature is None else float(cfg.temperature)
    endpoint = cache_endpoint(cfg)  # two servers with one model name never share verdicts
    built = prompts or {}

    def _prompt(record: QARecord) -> str:
        known = built.get(record.question_id)
        return known if known is not None else spec.build_record_prompt(record)

    calls: list[CallSpec] = []
    for record in records:
        request = JudgeRequest(
            model=cfg.model,
            system=spec.system_prompt,
            prompt=_prompt(record),
            max_tokens=cfg.max_tokens,
            temperature=temperature,
            output_schema=schema,
            response_format=spec.response_format,
        )
        for run in range(cfg.runs):
            key = CacheKey(
                model=cfg.model,
                api_version=api_version,
                temperature=temperature,
                protocol=spec.name,
                prompt_version=spec.prompt_version,
                max_tokens=cfg.max_tokens,
                structured_output=schema is not None,
                question=record.question,
                ground_truth=record.ground_truth,
                prediction=record.prediction,
                category=record.category,
                run_index=run,
                template_sha256=template["sha256"] if template else None,
                provider=cfg.provider,
                endpoint=endpoint,
            )
            calls.append(
                CallSpec(record.question_id, record.category, run, request, key, key.digest())
            )
    return calls


def result_from_reply(
    reply: JudgeReply, protocol: str | ProtocolSpec, run: int, *, cached: bool
) -> JudgeResult:
    """Parse an API reply into a valid or parse-failure :class:`JudgeResult`.

    Args:
        reply: the API reply (fresh or cached).
        protocol: judge protocol (a name, or a spec such as a template's).
        run: run index.
        cached: whether it came from the cache.

    Returns:
        A valid result (score 0-100), or an unscored parse failure (score ``None``,
        the reason in ``error``). A template with ``on_unparsed: {score: N}`` scores a
        reply it cannot read N instead (``unparsed_scored`` set, the reason kept).
    """
    spec = get_protocol(protocol)
    parsed = parse_judge_reply(reply.text, spec, stop_reason=reply.stop_reason)
    common = {
        "run": run,
        "raw": reply.text,
        "stop_reason": reply.stop_reason,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "usage_known": reply.usage_known,
        "cached": cached,
        "explanation": parsed.explanation,
        "label": parsed.label,
        "batch_id": reply.batch_id,
        "model": reply.model,
    }
    if parsed.ok:
        return JudgeResult(score=parsed.score, outcome="valid", **common)  # type: ignore[arg-type]
    if spec.unparsed_score is not None and reply.text.strip():
        return JudgeResult(
            score=spec.unparsed_score, outcome="valid", unparsed_scored=True,
            error=f"{parsed.failure_reason} (scored {spec.unparsed_score:g}: on_unparsed)",
            **common,  # type: ignore[arg-type]
        )  # fmt: skip
    return JudgeResult(
        score=None,
        outcome="parse_failure",
        error=parsed.failure_reason,
        **common,  # type: ignore[arg-type]
    )


def no_verdict_result(reply: JudgeReply, run: int, attempts: int) -> JudgeResult:
    """The unscored result of a reply without a verdict (see ``llm.calls.lacks_verdict``)."""
    what = "an empty reply" if not reply.text.strip() else "no verdict"
    return JudgeResult(
        score=None,
        outcome="no_verdict",
        run=run,
        raw=reply.text,
        error=f"{what} (stop_reason {reply.stop_reason}) after {attempts} attempt(s); not cached",
        stop_reason=reply.stop_reason,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        usage_known=reply.usage_known,
    )


@dataclass(frozen=True)
class VerdictReader:
    """Reads judge replies for the runtime (:class:`~locomo_exp.llm.calls.ReplyReader`).

    Args:
        protocol: the judge protocol whose verdicts the replies carry (a name or a spec,
            e.g. a template's).
    """

    protocol: str | ProtocolSpec

    def read(self, reply: JudgeReply, run: int, *, cached: bool) -> JudgeResult:
        """:func:`result_from_reply` under this reader's protocol."""
        return result_from_reply(reply, self.protocol, run, cached=cached)

    def failed(self, run: int, error: str) -> JudgeResult:
        """An API error of run ``run`` (unscored, the reason in ``error``)."""
        return JudgeResult(score=None, outcome="api_error", run=run, error=error)

    def no_verdict(self, reply: JudgeReply, run: int, attempts: int) -> JudgeResult:
        """:func:`no_verdict_result`."""
        return no_verdict_result(reply, run, attempts)

    def with_run(self, result: JudgeResult, run: int) -> JudgeResult:
        """``result`` with its run index set to ``run``."""
        return replace(result, run=run)


def verdict_reader(cfg: JudgeConfig) -> VerdictReader:
    """The reader of a judge config's protocol (``judge.protocol``, or its template)."""
    return VerdictReader(protocol_spec(cfg))


__all__ = [
    "VerdictReader",
    "build_call_specs",
    "no_verdict_result",
    "result_from_reply",
    "verdict_reader",
]
