"""Judge calls: one :class:`CallSpec` per (question, run), and replies turned into results.

Building a request is separate from sending it (:mod:`.pool`, :mod:`.batch`): a spec holds
the request and its cache key; :func:`result_from_reply` parses a reply (fresh or cached)
into a valid or unscored :class:`~locomo_exp.judge.aggregate.JudgeResult`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.judge.cache import CacheKey, JudgeCache
from locomo_exp.judge.messages import JudgeReply, JudgeRequest
from locomo_exp.judge.models import uses_structured_output
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.protocols import ProtocolSpec, get_protocol, protocol_spec
from locomo_exp.judge.protocols.template import template_card
from locomo_exp.judge.providers import cache_endpoint
from locomo_exp.results import QARecord

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallSpec:
    """One judge call to make (or to find in the cache).

    Attributes:
        question_id: the question.
        category: its LoCoMo category id.
        run: 0-based run index.
        request: the API request.
        key: the cache key.
        digest: ``key.digest()``.
    """

    question_id: str
    category: int
    run: int
    request: JudgeRequest
    key: CacheKey
    digest: str


def build_call_specs(
    records: list[QARecord], cfg: JudgeConfig, *, api_version: str
) -> list[CallSpec]:
    """One :class:`CallSpec` per record and run, question-major (q0 r0..rN, q1 r0..).

    Args:
        records: records to judge (already filtered by category).
        cfg: the judge config.
        api_version: the ``anthropic-version`` the calls carry.

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
    calls: list[CallSpec] = []
    for record in records:
        request = JudgeRequest(
            model=cfg.model,
            system=spec.system_prompt,
            prompt=spec.build_record_prompt(record),
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


NO_VERDICT_STOP_REASONS = ("max_tokens", "refusal")
"""Stop reasons after which a reply without a verdict is retried, not cached."""

NO_VERDICT_RETRIES = 1
"""Extra attempts for a reply without a verdict (empty, cut at max_tokens, refused)."""

STORED_OUTCOMES = ("valid", "parse_failure")
"""Outcomes whose reply is in the cache (a re-run reads them instead of calling)."""


def lacks_verdict(reply: JudgeReply, result: JudgeResult) -> bool:
    """Whether a reply is empty, cut at ``max_tokens`` or refused without a verdict.

    Such a reply says nothing about the answer: it is retried and never cached, unlike a
    real parse failure (a reply with text the parser cannot read).

    Args:
        reply: the API reply.
        result: its parsed result (:func:`result_from_reply`).

    Returns:
        True when ``result`` is not valid and the text is empty or the stop reason is
        ``max_tokens`` or ``refusal``.
    """
    if result.outcome == "valid":
        return False
    return not reply.text.strip() or reply.stop_reason in NO_VERDICT_STOP_REASONS


def no_verdict_result(reply: JudgeReply, run: int, attempts: int) -> JudgeResult:
    """The unscored result of a reply without a verdict (see :func:`lacks_verdict`)."""
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


def split_cached(
    specs: list[CallSpec], cache: JudgeCache | None, protocol: str | ProtocolSpec
) -> tuple[dict[tuple[str, int], JudgeResult], list[CallSpec]]:
    """Answer the specs the cache has a reply for; return the others, in order.

    Logs how many calls were found when the cache had any.

    Args:
        specs: the calls.
        cache: the open cache, or ``None`` (nothing is cached).
        protocol: judge protocol (to parse cached replies).

    Returns:
        ``(results, pending)``: ``(question_id, run) -> result`` (``cached=True``) of the
        specs found in the cache, and the specs that were not, in their original order.
    """
    stored = cache.get_many(s.digest for s in specs) if cache is not None else {}
    results: dict[tuple[str, int], JudgeResult] = {}
    pending: list[CallSpec] = []
    for spec in specs:
        reply = stored.get(spec.digest)
        if reply is None:
            pending.append(spec)
        else:
            results[(spec.question_id, spec.run)] = result_from_reply(
                reply, protocol, spec.run, cached=True
            )
    if stored:
        logger.info(
            "judge: %d of %d calls found in the cache", len(specs) - len(pending), len(specs)
        )
    return results, pending
