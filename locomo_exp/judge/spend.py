"""One ``judge.max_cost_usd`` over everything a job pays: answers, audit controls, panel.

A job's judge calls come in parts ("phases"): the real answers, then the audit's
controls and each panel member (in the order the job runs them: a plug-in may run
the panel before the audit). A
:class:`JobSpend` is made once per job from every part's estimate
(:func:`plan_job_spend`) and handed to each part's :func:`~locomo_exp.judge.job.run_judge`:

1. Before anything is written: the whole job's estimate (every part's calls still to
   make, USD at list price, :func:`~locomo_exp.judge.estimate.dry_run_estimate`) must fit
   the cap; otherwise one line, no call made.
2. Before the first call of each part: what was paid so far + this part's estimate (the
   cache read again) + the later parts' estimates must fit; otherwise the job stops with a
   line saying what was paid, for what, and what is left.
3. As calls are made: each paid call adds its tokens at the model's price (batch replies at
   ``judge.batch.price_factor``). Before each call is sent, what was paid + this call and
   the calls in flight, each at the part's mean cost per call paid so far (its estimate
   before the first), must fit; otherwise the :class:`~locomo_exp.llm.stop.CallsStop` is
   set: no new call, the calls in flight finish. Only calls dearer than the mean of those
   before them can pass the cap, so the overshoot is at most one concurrency window.
4. Batch mode: before each batch is created, paid + the estimate of the batches submitted
   and not collected + this batch's estimate + the later parts' must fit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from locomo_exp.config import JudgeConfig, JudgeMode
from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.judge.calls import build_call_specs
from locomo_exp.judge.estimate import dry_run_estimate, price_words
from locomo_exp.judge.preflight import judged_records
from locomo_exp.llm.cache import JudgeCache, resolve_cache_path
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.models import model_price
from locomo_exp.llm.providers import api_version as provider_api_version
from locomo_exp.llm.spend import cost_usd
from locomo_exp.llm.stop import CallsStop
from locomo_exp.results import QARecord
from locomo_exp.results.words import counted

Part = tuple[str, list[QARecord], JudgeConfig]
"""One part of a job's judge calls: its kind (``answer``, ``audit``, ``panel``), records, config."""


def usd(amount: float) -> str:
    """An amount of USD as the cap lines print it: ``$0.10``, ``$0.0981``, ``$1e-06``."""
    if amount == 0:
        return "$0"
    if amount < 0.0001:
        return f"${amount:.2g}"
    return f"${amount:.2f}" if round(amount, 2) == round(amount, 4) else f"${amount:.4f}"


class JobSpend:
    """What a job has paid for its judge calls, against ``judge.max_cost_usd``.

    Args:
        cap: the cap, USD.
        parts: ``(kind, calls to make, estimated USD or None)`` of each part of the job, in
            the order the parts run (empty: one part, the answers).
        stop: the stop signal the pool and batch mode check (a new one if ``None``).
    """

    def __init__(
        self,
        cap: float,
        parts: Sequence[tuple[str, int, float | None]] = (),
        stop: CallsStop | None = None,
    ) -> None:
        self.cap = float(cap)
        self.stop = stop if stop is not None else CallsStop()
        self.paid = 0.0
        self.calls: dict[str, int] = {}  # kind -> calls paid
        self.tokens = [0, 0]  # input, output tokens billed (calls with known usage)
        self.unknown = 0  # calls paid whose usage or price is unknown (counted at estimate)
        self.parts = list(parts)
        self._later = list(parts)  # the parts not begun yet
        self._kind = "answer"
        self._price: dict[str, float] | None = None
        self._factor = 1.0
        self._per_call = 0.0  # estimated USD of one call of the current part
        self._part = [0.0, 0]  # USD paid and calls paid in the current part
        self._committed = 0.0  # estimated USD of batch requests submitted, not collected
        self._lock = threading.Lock()

    # -- words -------------------------------------------------------------------------
    def paid_words(self) -> str:
        """``$0.0981 paid (40 answer calls, 12 audit calls)``."""
        kinds = ", ".join(counted(n, f"{kind} call") for kind, n in self.calls.items() if n)
        return f"{usd(self.paid)} paid" + (f" ({kinds})" if kinds else "")

    def reached_words(self) -> str:
        """The reason of a stop at the cap (read when the job stops: the final figures)."""
        return f"spend cap {usd(self.cap)} reached after {self.paid_words()}"

    def share_stop(self, stop: CallsStop | None) -> CallsStop:
        """Use the job's other stop signal (its MLflow run's) for the cap too.

        Args:
            stop: the caller's signal, or ``None`` (the cap's own is kept).

        Returns:
            The one signal the calls check.
        """
        if stop is not None:
            self.stop = stop
        return self.stop

    # -- checks ------------------------------------------------------------------------
    def later_cost(self) -> float:
        """Estimated USD of the parts not begun yet (unknown prices count 0: checked apart)."""
        return sum(cost or 0.0 for _, _, cost in self._later)

    def refuse_job(self, cfg: JudgeConfig) -> None:
        """Refuse the whole job before any call when its estimate is above the cap.

        Raises:
            JudgeError: one line: the calls to make by kind and their estimate; no call made.
        """
        calls = sum(n for _, n, _ in self.parts)
        total = sum(cost or 0.0 for _, _, cost in self.parts)
        if calls == 0 or total <= self.cap:
            return
        by_kind: dict[str, int] = {}
        for kind, n, _ in self.parts:
            by_kind[kind] = by_kind.get(kind, 0) + n
        kinds = (
            " (" + ", ".join(f"{n} {kind}" for kind, n in by_kind.items() if n) + ")"
            if len([n for n in by_kind.values() if n]) > 1
            else ""
        )
        raise JudgeError(
            f"judge.max_cost_usd={self.cap:g}: the {calls} calls to make{kinds} are estimated "
            f"at ${total:.4f} {price_words(cfg)}, above the cap; no call was made "
            "(judge.dry_run=true shows the estimate; raise the cap, lower judge.runs or "
            "data.limit)"
        )

    def begin(self, cfg: JudgeConfig, estimate: dict[str, Any]) -> str | None:
        """Start the next part: check paid + its estimate + the later parts' against the cap.

        Args:
            cfg: the part's judge config (its price).
            estimate: :func:`~locomo_exp.judge.estimate.dry_run_estimate` of its calls now.

        Returns:
            ``None`` when the part may start, else the reason it may not (something was
            paid already: the caller stops the job with it).

        Raises:
            JudgeError: nothing paid yet and the estimate is above the cap (no call made).
        """
        if self._later:
            self._kind = self._later.pop(0)[0]
        self._price = model_price(cfg)
        batch = JudgeMode(cfg.mode) is JudgeMode.batch
        self._factor = float(cfg.batch.price_factor) if batch else 1.0
        cost = estimate.get("estimated_cost_usd")
        to_make = int(estimate.get("calls_to_make") or 0)
        self._per_call = (cost or 0.0) / to_make if to_make else 0.0
        self._part = [0.0, 0]
        if cost is None or to_make == 0:
            return None
        later = self.later_cost()
        if self.paid + cost + later <= self.cap:
            return None
        if self.paid == 0:
            self.parts = [(self._kind, to_make, cost), *self._later]
            self.refuse_job(cfg)
        rest = f" (and ${later:.4f} for the parts after it)" if later else ""
        return (
            f"spend cap {usd(self.cap)} would be passed: {self.paid_words()}; the "
            f"{counted(to_make, f'{self._kind} call')} left are estimated at ${cost:.4f}{rest}, "
            f"above the {usd(max(self.cap - self.paid, 0.0))} left"
        )

    def next_call_cost(self) -> float:
        """USD one more call of the current part is expected to cost.

        Returns:
            The mean cost of the part's calls paid so far, or its estimate per call before
            the first is paid.
        """
        paid, calls = self._part
        return paid / calls if calls else self._per_call

    def before_call(self, in_flight: int) -> None:
        """The pool, before it sends a call: stop when it and those in flight would pass the cap.

        Args:
            in_flight: calls sent and not answered yet (they will be paid).
        """
        if self.paid + (in_flight + 1) * self.next_call_cost() > self.cap:
            self.stop.set(self.reached_words)

    def on_paid(self, result: JudgeResult) -> None:
        """Add one call made (the pool's callback); set the stop before the cap is passed."""
        self.add([result])
        if self.paid + self.next_call_cost() > self.cap:  # one more call would pass it
            self.stop.set(self.reached_words)

    def add(self, results: Iterable[JudgeResult]) -> None:
        """Add calls made to what was paid (API errors are not billed; cached ones free).

        A reply without token usage counts at the part's estimate per call, not 0.
        """
        with self._lock:
            for result in results:
                if result.cached or result.outcome == "api_error":
                    continue
                factor = self._factor if result.batch_id else 1.0
                cost = cost_usd(self._price, result.input_tokens, result.output_tokens, factor)
                if result.usage_known:
                    self.tokens = [self.tokens[0] + result.input_tokens,
                                   self.tokens[1] + result.output_tokens]
                if cost is None or not result.usage_known:
                    cost, self.unknown = self._per_call, self.unknown + 1
                self.paid += cost
                self.calls[self._kind] = self.calls.get(self._kind, 0) + 1
                self._part = [self._part[0] + cost, self._part[1] + 1]
            self._committed = 0.0

    def before_batch(self, batch_requests: int, requests_left: int) -> None:
        """Batch mode, before a batch is created: stop when the job would pass the cap.

        The whole job's estimate then: paid + the batches submitted and not collected +
        this batch and the later ones of the part + the later parts.

        Args:
            batch_requests: the batch's requests.
            requests_left: the requests of this batch and the part's later batches.
        """
        cost = requests_left * self._per_call
        with self._lock:
            committed = self._committed
            if self.paid + committed + cost + self.later_cost() <= self.cap:
                self._committed += batch_requests * self._per_call
                return
        batches = f" and ${committed:.4f} in batches submitted" if committed else ""
        later = self.later_cost()
        rest = f" (and ${later:.4f} for the parts after it)" if later else ""
        self.stop.set(
            f"spend cap {usd(self.cap)} would be passed: {self.paid_words()}{batches}; the "
            f"{counted(requests_left, f'{self._kind} call')} left to submit are estimated at "
            f"${cost:.4f}{rest}, above the {usd(max(self.cap - self.paid - committed, 0.0))} "
            "left; no batch created for them"
        )


@dataclass(frozen=True)
class PaidCalls:
    """What a job paid for its judge calls before it failed (a sweep's summary shows it).

    Attributes:
        calls: judge calls paid (cache hits and API errors are not billed).
        input_tokens: input tokens billed; ``None`` when a reply carried no usage.
        output_tokens: output tokens billed; ``None`` likewise.
        cost_usd: USD at the model's list price (batch calls at the batch factor);
            ``None`` when unknown (a reply without usage, a model without a price).
    """

    calls: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None

    def to_json(self) -> dict[str, Any]:
        """The four fields as a dict (``sweep_job.json``'s ``paid``)."""
        return asdict(self)


_PAID_ATTRIBUTE = "judge_paid_calls"


def note_paid(
    error: BaseException, spend: JobSpend | None, judge_summary: Mapping[str, Any] | None
) -> None:
    """Attach to a job's error what the job paid before it (nothing when nothing was paid).

    Args:
        error: the exception the job raises.
        spend: the job's spend under ``judge.max_cost_usd`` (every part's paid calls), or
            ``None`` without a cap.
        judge_summary: the judge's ``summary.json`` section when the answers were judged
            (this run's calls, tokens and cost, the audit's and panel's cost in
            ``trust.total_cost_usd``): preferred, as a completed job's row reads it, unless
            it lacks the audit and panel (``trust``) and ``spend`` counted them.
    """
    paid: PaidCalls | None = None
    if judge_summary is not None and (spend is None or "trust" in judge_summary):
        tokens = judge_summary.get("tokens") or {}
        unknown = bool(tokens.get("unknown_usage_calls"))
        trust = judge_summary.get("trust") or {}
        paid = PaidCalls(
            calls=int((judge_summary.get("counts") or {}).get("calls_made") or 0),
            input_tokens=None if unknown else tokens.get("input"),
            output_tokens=None if unknown else tokens.get("output"),
            cost_usd=trust.get("total_cost_usd", judge_summary.get("estimated_cost_usd")),
        )
    elif spend is not None:
        unknown = bool(spend.unknown)
        paid = PaidCalls(
            calls=sum(spend.calls.values()),
            input_tokens=None if unknown else spend.tokens[0],
            output_tokens=None if unknown else spend.tokens[1],
            cost_usd=None if unknown else spend.paid,
        )
    if paid is not None and paid.calls:
        setattr(error, _PAID_ATTRIBUTE, paid)


def paid_of(error: BaseException) -> PaidCalls | None:
    """What :func:`note_paid` attached to ``error``, or ``None`` (nothing known paid)."""
    paid = getattr(error, _PAID_ATTRIBUTE, None)
    return paid if isinstance(paid, PaidCalls) else None


def plan_job_spend(
    parts: Sequence[Part], cap: float | None, start_dir: Path, *, dry_run: bool = False,
    cache: JudgeCache | None = None,
) -> JobSpend | None:
    """Estimate every part of a job and refuse the job when the sum is above the cap.

    A call whose prompt an earlier part of the job already sends (a panel member that is
    the main judge) is counted once: the cache answers it then.

    Args:
        parts: ``(kind, records, config)`` of each part, in the order they run.
        cap: ``judge.max_cost_usd`` (USD), or ``None``: no cap.
        start_dir: where a relative ``judge.cache_path`` is resolved.
        dry_run: ``judge.dry_run``: nothing is paid, nothing checked.
        cache: the job's open cache (its preflight's); a part whose ``judge.cache_path``
            is that file reads its stored replies through it, not a new connection.

    Returns:
        The job's :class:`JobSpend`, or ``None`` without a cap (or in a dry run).

    Raises:
        JudgeError: the whole job's estimate is above the cap (no call made, nothing
            written), or a part's model has no price (the cap cannot be checked).
    """
    if cap is None or dry_run:
        return None
    seen: set[str] = set()
    planned: list[tuple[str, int, float | None]] = []
    for kind, records, cfg in parts:
        specs = build_call_specs(
            judged_records(records, cfg), cfg, api_version=provider_api_version(cfg)
        )
        fresh = [s for s in specs if not (cfg.cache and s.digest in seen)]
        seen.update(s.digest for s in specs)
        own = cache is not None and cfg.cache and (
            resolve_cache_path(cfg.cache_path, start_dir) == cache.path)
        estimate = dry_run_estimate(fresh, cfg, start_dir, cache=cache if own else None)
        if estimate["estimated_cost_usd"] is None and estimate["calls_to_make"]:
            raise JudgeError(
                f"judge.max_cost_usd={cap:g} cannot be checked: no price for model "
                f"{cfg.model} (its preset's judge.model_info); no call was made. Set "
                "judge.max_cost_usd=null to run without a cap"
            )
        planned.append((kind, int(estimate["calls_to_make"]), estimate["estimated_cost_usd"]))
    spend = JobSpend(cap, planned)
    spend.refuse_job(parts[0][2])
    return spend


__all__ = ["JobSpend", "PaidCalls", "Part", "note_paid", "paid_of", "plan_job_spend", "usd"]
