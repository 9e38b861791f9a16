"""Agreement of our judge with a reference, as ``summary.json`` -> judge -> trust holds it.

:class:`Rate` (a share with its Wilson interval, Wilson 1927) and :class:`Agreement`
(2x2 table, Cohen's kappa, sensitivity, specificity) are shared by the audit, the label and
stored-verdict comparisons and the panel; :class:`AgreementResult` is one comparison with
human labels or stored verdicts. Shares are 0-1. Re-exported by :mod:`locomo_exp.results`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.results.convert import opt_float


@dataclass(frozen=True)
class Rate:
    """A proportion with its Wilson interval (shares 0-1).

    Attributes:
        successes: items counted (accepted, agreeing...).
        n: items observed.
        rate: ``successes / n``, or ``None`` when ``n`` is 0.
        ci_low: lower bound of the Wilson score interval, or ``None``.
        ci_high: upper bound, or ``None``.
        confidence: level of the interval (0.95).
    """

    successes: int
    n: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95

    def to_json(self) -> dict[str, Any]:
        """``{"successes", "n", "rate", "ci_low", "ci_high", "confidence"}``."""
        return {
            "successes": self.successes,
            "n": self.n,
            "rate": self.rate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "confidence": self.confidence,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rate:
        """Inverse of :meth:`to_json` (``confidence`` defaults to 0.95)."""
        return cls(
            successes=int(data.get("successes") or 0),
            n=int(data.get("n") or 0),
            rate=opt_float(data.get("rate")),
            ci_low=opt_float(data.get("ci_low")),
            ci_high=opt_float(data.get("ci_high")),
            confidence=float(data.get("confidence", 0.95)),
        )


@dataclass(frozen=True)
class Agreement:
    """Agreement of a rater (our judge) with a reference on accept/reject, over ``n`` items.

    Attributes:
        tp: reference correct, rater accepts.
        fn: reference correct, rater rejects.
        fp: reference wrong, rater accepts.
        tn: reference wrong, rater rejects.
        agreement: share of items where both agree.
        kappa: Cohen's kappa (-1..1), or ``None`` when undefined.
        sensitivity: share of reference-correct items the rater accepts.
        specificity: share of reference-wrong items the rater rejects.
    """

    tp: int
    fn: int
    fp: int
    tn: int
    agreement: Rate
    kappa: float | None
    sensitivity: Rate
    specificity: Rate

    @property
    def n(self) -> int:
        """Number of compared items."""
        return self.tp + self.fn + self.fp + self.tn

    @property
    def table(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The 2x2 table ``((tp, fn), (fp, tn))``: rows reference, columns rater."""
        return ((self.tp, self.fn), (self.fp, self.tn))

    def to_json(self) -> dict[str, Any]:
        """``{"tp", "fn", "fp", "tn", "agreement", "kappa", "sensitivity", "specificity"}``."""
        return {
            "tp": self.tp,
            "fn": self.fn,
            "fp": self.fp,
            "tn": self.tn,
            "agreement": self.agreement.to_json(),
            "kappa": self.kappa,
            "sensitivity": self.sensitivity.to_json(),
            "specificity": self.specificity.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Agreement:
        """Inverse of :meth:`to_json`."""
        return cls(
            tp=int(data["tp"]),
            fn=int(data["fn"]),
            fp=int(data["fp"]),
            tn=int(data["tn"]),
            agreement=Rate.from_json(data["agreement"]),
            kappa=opt_float(data.get("kappa")),
            sensitivity=Rate.from_json(data["sensitivity"]),
            specificity=Rate.from_json(data["specificity"]),
        )


def by_category_json(values: Mapping[int, Any]) -> dict[str, Any]:
    """``{str(category id): value.to_json()}`` in the given order (JSON keys are strings)."""
    return {str(category): value.to_json() for category, value in values.items()}


@dataclass(frozen=True)
class DisagreementRow:
    """One question where our judge and the reference disagree.

    Attributes:
        question_id: the question's id.
        category: LoCoMo category id.
        question: question text.
        gold: gold answer.
        prediction: the system's answer.
        reference: ``True`` when the reference calls the answer correct.
        verdict: our judge's mean verdict (0-100).
    """

    question_id: str
    category: int
    question: str
    gold: str
    prediction: str
    reference: bool
    verdict: float

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return {
            "question_id": self.question_id,
            "category": self.category,
            "question": self.question,
            "gold": self.gold,
            "prediction": self.prediction,
            "reference": self.reference,
            "verdict": self.verdict,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DisagreementRow:
        """Inverse of :meth:`to_json`."""
        return cls(
            question_id=str(data["question_id"]),
            category=int(data["category"]),
            question=str(data["question"]),
            gold=str(data["gold"]),
            prediction=str(data["prediction"]),
            reference=bool(data["reference"]),
            verdict=float(data["verdict"]),
        )


@dataclass(frozen=True)
class AgreementResult:
    """Our judge against a reference: human labels or the verdicts stored in the input.

    Attributes:
        reference_name: ``"human labels"`` or ``"stored verdicts"``.
        overall: agreement over every compared question, or ``None`` when none was.
        per_category: agreement per LoCoMo category id.
        n_ambiguous: questions the reference left undecided (AMBIGUOUS labels).
        n_unscored: compared questions without a verdict from our judge.
        n_unmatched: labels that match no question.
        n_disagreements: questions where the two disagree.
        disagreements: the first of them (at most 20), for reading.
    """

    reference_name: str
    overall: Agreement | None
    per_category: dict[int, Agreement] = field(default_factory=dict)
    n_ambiguous: int = 0
    n_unscored: int = 0
    n_unmatched: int = 0
    n_disagreements: int = 0
    disagreements: tuple[DisagreementRow, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (category ids as strings)."""
        return {
            "reference_name": self.reference_name,
            "overall": None if self.overall is None else self.overall.to_json(),
            "per_category": by_category_json(self.per_category),
            "n_ambiguous": self.n_ambiguous,
            "n_unscored": self.n_unscored,
            "n_unmatched": self.n_unmatched,
            "n_disagreements": self.n_disagreements,
            "disagreements": [d.to_json() for d in self.disagreements],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgreementResult:
        """Inverse of :meth:`to_json`."""
        overall = data.get("overall")
        return cls(
            reference_name=str(data["reference_name"]),
            overall=None if overall is None else Agreement.from_json(overall),
            per_category={
                int(c): Agreement.from_json(a) for c, a in (data.get("per_category") or {}).items()
            },
            n_ambiguous=int(data.get("n_ambiguous") or 0),
            n_unscored=int(data.get("n_unscored") or 0),
            n_unmatched=int(data.get("n_unmatched") or 0),
            n_disagreements=int(data.get("n_disagreements") or 0),
            disagreements=tuple(
                DisagreementRow.from_json(d) for d in data.get("disagreements") or ()
            ),
        )
