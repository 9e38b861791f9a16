"""Checks of the judge on answers whose verdict is known: is its J inflated or deflated?

Three sources know some verdicts without trusting the judge: the audit controls (LoCoMo's
:mod:`.audit`, or a benchmark plug-in's own controls), human labels (``judge.labels``) and the
verdicts another harness stored in the input. Each gives rates with a 95% Wilson interval
(Wilson 1927); a check gives a verdict only when that interval lies wholly on one side of its
limit (:class:`~locomo_exp.benchmark.spec.JudgeCheckLimits`, one per benchmark), otherwise
"not measured" and why:

* **J inflated**: answers known to be wrong are accepted more often than
  ``inflated_above`` -- per should-be-rejected kind, or the kinds pooled (so a small audit,
  1 control per kind, is still checked), or the answers a reference calls wrong
  (1 - specificity).
* **J deflated**: answers known to be right (the gold given as the answer, the answers a
  reference calls correct) are rejected more often than ``deflated_above`` (1 - sensitivity).
* **low agreement**: Cohen's kappa with labels or stored verdicts below ``min_kappa`` over at
  least ``kappa_min_n`` answers.

One more check reads no known verdict: **unreadable replies**, when more than
``unreadable_above`` of the judge's replies to the answers could not be read (a reply format
the parser or template does not match). A reply a template's ``on_unparsed`` scored is not the
judge's verdict: the other checks leave it out (it can make J look deflated, but the cause
is the reply format, not the judge), and this check counts it.

The warnings are one line each (``"J inflated (the judge accepted 4/4 ...)"``); the run's
judge status becomes ``"warning: <warnings>"`` (:func:`warning_status`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from locomo_exp.benchmark.spec import JudgeCheckLimits
from locomo_exp.results.model_ids import DIFFERENT, model_match
from locomo_exp.results.run import WARNING_PREFIX

INFLATED = "J inflated"
DEFLATED = "J deflated"
LOW_AGREEMENT = "low agreement"
UNREADABLE = "unreadable judge replies"
ANOTHER_JUDGE = "another judge answered"


class RateLike(Protocol):
    """A share with its Wilson interval (:class:`locomo_exp.results.Rate`, ``Proportion``)."""

    @property
    def successes(self) -> int: ...  # noqa: D102
    @property
    def n(self) -> int: ...  # noqa: D102
    @property
    def rate(self) -> float | None: ...  # noqa: D102
    @property
    def ci_low(self) -> float | None: ...  # noqa: D102
    @property
    def ci_high(self) -> float | None: ...  # noqa: D102
    @property
    def confidence(self) -> float: ...  # noqa: D102


@dataclass(frozen=True)
class KnownRate:
    """The judge's error rate on one group of answers with a known verdict.

    Attributes:
        label: what the answers are, for the warning (``"known-wrong other_gold
            controls"``, ``"answers the stored verdicts call correct"``).
        expected_accept: whether these answers should be accepted (the error is then a
            false reject) or rejected (a false accept).
        error: the error rate: false accepts or false rejects over the scored answers.
    """

    label: str
    expected_accept: bool
    error: RateLike


@dataclass(frozen=True)
class JudgeChecks:
    """What the checks found.

    Attributes:
        warnings: one line per finding (``"J inflated (...)"``, ``"J deflated (...)"``,
            ``"low agreement (...)"``), in that order; empty when nothing was found.
        verdicts: check name -> its verdict in words: ``false_accept`` and
            ``false_reject`` for the audit (``"J inflated"``, ``"not inflated: ..."``,
            ``"not measured (n too small: ...)"``).
    """

    warnings: tuple[str, ...] = ()
    verdicts: dict[str, str] = field(default_factory=dict)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def share_words(rate: RateLike) -> str:
    """``"100.0%, 95% CI [51.0, 100.0]"``: a rate with its interval, in percent."""
    return (
        f"{_pct(rate.rate)}%, {100 * rate.confidence:g}% CI "
        f"[{_pct(rate.ci_low)}, {_pct(rate.ci_high)}]"
    )


def rate_words(rate: RateLike) -> str:
    """``"4/4 (100.0%, 95% CI [51.0, 100.0])"``: counts, then the rate with its interval."""
    return f"{rate.successes}/{rate.n} ({share_words(rate)})"


def above(rate: RateLike, limit: float) -> bool:
    """Whether the rate's interval lies wholly above ``limit`` (0-1); ``False`` when n is 0."""
    return rate.n > 0 and rate.ci_low is not None and rate.ci_low > limit


def below(rate: RateLike, limit: float) -> bool:
    """Whether the rate's interval lies wholly below ``limit`` (0-1); ``False`` when n is 0."""
    return rate.n > 0 and rate.ci_high is not None and rate.ci_high < limit


def _finding(known: KnownRate) -> str:
    verb = "rejected" if known.expected_accept else "accepted"
    name = "false-reject" if known.expected_accept else "false-accept"
    head = DEFLATED if known.expected_accept else INFLATED
    e = known.error
    return f"{head} (the judge {verb} {e.successes}/{e.n} {known.label}: {name} {share_words(e)})"


def _pooled_verdict(pooled: RateLike, limit: float, *, wrong: bool, found: bool) -> str:
    """The pooled check's verdict in words (``false_accept`` or ``false_reject``)."""
    head, name = (INFLATED, "false-accept") if wrong else (DEFLATED, "false-reject")
    if found:
        return head
    if pooled.n == 0:
        kind = "should-be-rejected" if wrong else "should-be-accepted"
        return f"not measured (no {kind} control got a verdict)"
    limit_text = f"{100 * limit:g}%"
    if below(pooled, limit):
        return f"not {head[2:]}: pooled {name} {rate_words(pooled)} lies below {limit_text}"
    return f"not measured (n too small: pooled {name} {rate_words(pooled)} contains {limit_text})"


def audit_checks(
    kinds: Iterable[KnownRate],
    pooled_false_accept: RateLike,
    pooled_false_reject: RateLike,
    limits: JudgeCheckLimits,
) -> JudgeChecks:
    """Check the audit: per kind, then the kinds pooled (small audits).

    A kind whose error interval lies wholly above its limit is a finding; when no single
    kind is, the pooled rate over the kinds is checked (4/4 known-wrong controls accepted,
    one per kind, gives the interval [51.0, 100.0]: wholly above 50%).

    Args:
        kinds: each control kind's error rate (false reject for should-be-accepted kinds,
            false accept for the others).
        pooled_false_accept: accepted over all should-be-rejected controls.
        pooled_false_reject: rejected over all should-be-accepted controls.
        limits: the benchmark's limits.

    Returns:
        The warnings and the ``false_accept`` / ``false_reject`` verdicts.
    """
    kinds = list(kinds)
    warnings: list[str] = []
    verdicts: dict[str, str] = {}
    for wrong, pooled, limit in (
        (True, pooled_false_accept, limits.inflated_above),
        (False, pooled_false_reject, limits.deflated_above),
    ):
        group = [k for k in kinds if k.expected_accept is not wrong]
        found = [_finding(k) for k in group if above(k.error, limit)]
        if not found and len(group) > 1 and above(pooled, limit):
            label = f"known-{'wrong' if wrong else 'right'} controls of {len(group)} kinds pooled"
            found = [_finding(KnownRate(label, not wrong, pooled))]
        warnings += found
        verdicts["false_accept" if wrong else "false_reject"] = _pooled_verdict(
            pooled, limit, wrong=wrong, found=bool(found)
        )
    return JudgeChecks(tuple(sorted(warnings, key=_order)), verdicts)


def agreement_checks(
    reference: str,
    *,
    sensitivity: RateLike,
    specificity: RateLike,
    kappa: float | None,
    n: int,
    limits: JudgeCheckLimits,
) -> JudgeChecks:
    """Check the judge against a reference's verdicts (human labels or stored verdicts).

    Args:
        reference: the reference in words (``"the stored verdicts"``, ``"the human labels"``).
        sensitivity: share of the answers the reference calls correct that the judge accepts.
        specificity: share of the answers the reference calls wrong that it rejects.
        kappa: Cohen's kappa, or ``None`` when undefined.
        n: answers compared.
        limits: the benchmark's limits.

    Returns:
        The warnings: J deflated when 1 - sensitivity lies wholly above
        ``limits.deflated_above``; J inflated when 1 - specificity lies wholly above
        ``limits.inflated_above``; low agreement when kappa < ``limits.min_kappa`` over at
        least ``limits.kappa_min_n`` answers.
    """
    warnings = []
    if below(sensitivity, 1.0 - limits.deflated_above):
        warnings.append(
            f"{DEFLATED} (the judge accepted {sensitivity.successes}/{sensitivity.n} of the "
            f"answers {reference} call correct: sensitivity {share_words(sensitivity)})"
        )
    if below(specificity, 1.0 - limits.inflated_above):
        warnings.append(
            f"{INFLATED} (the judge rejected {specificity.successes}/{specificity.n} of the "
            f"answers {reference} call wrong: specificity {share_words(specificity)})"
        )
    if kappa is not None and n >= limits.kappa_min_n and kappa < limits.min_kappa:
        warnings.append(
            f"{LOW_AGREEMENT} with {reference} (Cohen's κ {kappa:.3f} over {n} answers, "
            f"below {limits.min_kappa:g})"
        )
    return JudgeChecks(tuple(sorted(warnings, key=_order)))


def unreadable_checks(
    parse_failures: int, runs_total: int, limits: JudgeCheckLimits, scored: str = ""
) -> JudgeChecks:
    """Check how many of the judge's replies to the answers could not be read.

    Args:
        parse_failures: replies that could not be read (``counts.parse_failure``: unscored
            or scored by a template's ``on_unparsed``).
        runs_total: judge runs of the answers (``counts.runs_total``).
        limits: the benchmark's limits (``unreadable_above``).
        scored: what ``on_unparsed`` did with them, in words
            (:func:`locomo_exp.results.template_note.unparsed_scored_words`), or ``""``.

    Returns:
        One warning when ``parse_failures / runs_total`` is above ``unreadable_above``
        (``"unreadable judge replies (1540 of 1540 judge runs could not be read, 100.0%;
        1540 scored 0 by on_unparsed; limit 5%): ..."``), else none.
    """
    if runs_total <= 0 or parse_failures / runs_total <= limits.unreadable_above:
        return JudgeChecks()
    share = 100.0 * parse_failures / runs_total
    effect = (
        "J counts them at the on_unparsed score, not at a verdict of the judge"
        if scored
        else "J is the mean over the replies that could be read"
    )
    return JudgeChecks((
        f"{UNREADABLE} ({parse_failures} of {runs_total} judge runs could not be read, "
        f"{share:.1f}%" + (f"; {scored}" if scored else "")
        + f"; limit {100 * limits.unreadable_above:g}%): {effect}; check "
        "the reply format the prompt asks for against the one the parser reads "
        "(scores.jsonl keeps each raw reply)",
    ))  # fmt: skip


def answering_model_checks(
    asked: str | None, response_models: Mapping[str, int] | None
) -> JudgeChecks:
    """Check that the judge that answered is the one asked for.

    A proxy or an OpenAI-compatible server may serve another model under the name asked
    for; each reply's ``model`` field says which one answered. A dated snapshot of the
    model asked for (``gpt-4o-mini-2024-07-18`` for ``gpt-4o-mini``) is the same judge
    (:func:`locomo_exp.results.model_ids.model_match`).

    Args:
        asked: ``judge.model`` as sent.
        response_models: model id the API answered with -> judge runs (``summary.json``
            ``judge.response_models``, fresh and cached replies).

    Returns:
        One warning naming each other model and its share of the runs (``"another judge
        answered (asked for claude-sonnet-4-6; the API answered as gpt-4o-2024-08-06 in 4
        of 4 judge runs): ..."``), else none.
    """
    models = dict(response_models or {})
    others = {m: n for m, n in models.items() if model_match(m, asked) == DIFFERENT}
    if not asked or not others:
        return JudgeChecks()
    total = sum(models.values())
    listed = ", ".join(f"{m} in {n} of {total} judge runs" for m, n in others.items())
    return JudgeChecks((
        f"{ANOTHER_JUDGE} (asked for {asked}; the API answered as {listed}): the verdicts are "
        "that model's, and comparisons with a published judge are decided on it; check "
        "judge.base_url and the server behind it",
    ))  # fmt: skip


def _order(warning: str) -> int:
    heads = (ANOTHER_JUDGE, UNREADABLE, INFLATED, DEFLATED)
    return next((i for i, head in enumerate(heads) if warning.startswith(head)), len(heads))


def merged(*checks: JudgeChecks | None) -> tuple[str, ...]:
    """The warnings of several checks: unreadable replies, inflated, deflated, agreement."""
    found = [w for c in checks if c is not None for w in c.warnings]
    return tuple(sorted(dict.fromkeys(found), key=_order))


def warning_status(status: str, warnings: Iterable[str]) -> str:
    """A finished judge's status with its warnings: ``"warning: J inflated (...); ..."``.

    Args:
        status: the judge's status (``"ok"`` when it finished; any other is kept).
        warnings: the checks' warnings.

    Returns:
        ``status`` unchanged unless it is ``"ok"`` and there is a warning.
    """
    found = list(warnings)
    if status != "ok" or not found:
        return status
    return WARNING_PREFIX + "; ".join(found)


__all__ = [
    "DEFLATED",
    "INFLATED",
    "LOW_AGREEMENT",
    "ANOTHER_JUDGE",
    "UNREADABLE",
    "WARNING_PREFIX",
    "JudgeChecks",
    "KnownRate",
    "above",
    "agreement_checks",
    "audit_checks",
    "below",
    "merged",
    "rate_words",
    "share_words",
    "unreadable_checks",
    "answering_model_checks",
    "warning_status",
]
