"""Calls of the runtime: one :class:`CallSpec` per (question, run), and how replies become results.

The runtime sends requests and stores replies; what a reply *means* is the caller's: the
judge layer passes a :class:`ReplyReader` (``locomo_exp.judge.calls.VerdictReader``) that
turns a reply into its result type, and the runtime only reads the few fields of
:class:`CallResult` it needs (the outcome, for caching and retries; the tokens, for spend).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol, TypeVar

from locomo_exp.llm.cache import CacheKey, JudgeCache
from locomo_exp.llm.messages import JudgeReply, JudgeRequest

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


class CallResult(Protocol):
    """What the runtime reads of a call's result (the reader's result type has these).

    ``outcome`` is ``"valid"`` or ``"parse_failure"`` (a reply, stored in the cache),
    ``"no_verdict"`` (a reply saying nothing, not stored) or ``"api_error"`` (no reply).
    """

    @property
    def outcome(self) -> str:
        """``valid``, ``parse_failure``, ``no_verdict`` or ``api_error``."""

    @property
    def unparsed_scored(self) -> bool:
        """A reply the reader could not read but scored anyway (counted as a parse failure)."""

    @property
    def input_tokens(self) -> int:
        """Input tokens the call was billed for."""

    @property
    def output_tokens(self) -> int:
        """Output tokens the call was billed for."""


R = TypeVar("R", bound=CallResult)


class ReplyReader(Protocol[R]):
    """Turns replies (and failures) into the caller's results; passed in by the judge layer."""

    def read(self, reply: JudgeReply, run: int, *, cached: bool) -> R:
        """The result of a reply (fresh, or from the cache when ``cached``)."""

    def failed(self, run: int, error: str) -> R:
        """The unscored result of a call that got no reply (``outcome="api_error"``)."""

    def no_verdict(self, reply: JudgeReply, run: int, attempts: int) -> R:
        """The unscored result of a reply without a verdict (see :func:`lacks_verdict`)."""

    def with_run(self, result: R, run: int) -> R:
        """``result`` as the result of run ``run`` (one reply shared by equal requests)."""


NO_VERDICT_STOP_REASONS = ("max_tokens", "refusal")
"""Stop reasons after which a reply without a verdict is retried, not cached."""

NO_VERDICT_RETRIES = 1
"""Extra attempts for a reply without a verdict (empty, cut at max_tokens, refused)."""

STORED_OUTCOMES = ("valid", "parse_failure")
"""Outcomes whose reply is in the cache (a re-run reads them instead of calling)."""


def lacks_verdict(reply: JudgeReply, result: CallResult) -> bool:
    """Whether a reply is empty, cut at ``max_tokens`` or refused without a verdict.

    Such a reply says nothing about the answer: it is retried and never cached, unlike a
    real parse failure (a reply with text the parser cannot read).

    Args:
        reply: the API reply.
        result: its result (:meth:`ReplyReader.read`).

    Returns:
        True when ``result`` is not valid and the text is empty or the stop reason is
        ``max_tokens`` or ``refusal``.
    """
    if result.outcome == "valid":
        return False
    return not reply.text.strip() or reply.stop_reason in NO_VERDICT_STOP_REASONS


def split_cached(
    specs: list[CallSpec], cache: JudgeCache | None, reader: ReplyReader[R]
) -> tuple[dict[tuple[str, int], R], list[CallSpec]]:
    """Answer the specs the cache has a reply for; return the others, in order.

    Logs how many calls were found when the cache had any.

    Args:
        specs: the calls.
        cache: the open cache, or ``None`` (nothing is cached).
        reader: turns cached replies into results.

    Returns:
        ``(results, pending)``: ``(question_id, run) -> result`` (``cached=True``) of the
        specs found in the cache, and the specs that were not, in their original order.
    """
    stored = cache.get_many(s.digest for s in specs) if cache is not None else {}
    results: dict[tuple[str, int], R] = {}
    pending: list[CallSpec] = []
    for spec in specs:
        reply = stored.get(spec.digest)
        if reply is None:
            pending.append(spec)
        else:
            results[(spec.question_id, spec.run)] = reader.read(reply, spec.run, cached=True)
    if stored:
        logger.info(
            "judge: %d of %d calls found in the cache", len(specs) - len(pending), len(specs)
        )
    return results, pending


__all__ = [
    "NO_VERDICT_RETRIES",
    "STORED_OUTCOMES",
    "CallResult",
    "CallSpec",
    "ReplyReader",
    "lacks_verdict",
    "split_cached",
]
