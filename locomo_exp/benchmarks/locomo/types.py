"""The types LoCoMo's job hooks pass between steps, and its one error of its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.steps import Written
from locomo_exp.data.input_file import absolute_path

if TYPE_CHECKING:
    from locomo_exp.data import LoadedResults
    from locomo_exp.report.locomo_run import LocomoRun
    from locomo_exp.trust.plan import TrustPlan


class JudgeErrorRateExceeded(RuntimeError):
    """The judge ended without a usable J (too many API errors, or no valid verdict)."""


def resolve_path(path: str, start_dir: Path) -> Path:
    """Resolve a user path against the start directory (``~`` expanded)."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else absolute_path(start_dir / candidate)


@dataclass(frozen=True)
class LocomoInput:
    """LoCoMo's input as the job goes: read, planned, scored before the judge.

    Attributes:
        loaded: the validated records (run 1 with every run's stored J for ``data.runs``).
        trust_plan: the audit, labels and panel planned in the preflight, or ``None``.
        lexical: per-record F1/BLEU-1 (0-1), empty when F1 is not computed.
        answer_key: the errata section, or ``None``.
        status: ``summary["status"]``, updated as the job goes.
        record: what the last write wrote (the record before the judge, or after it failed).
    """

    loaded: LoadedResults
    trust_plan: TrustPlan | None = None
    lexical: list[dict[str, float]] = field(default_factory=list)
    answer_key: dict[str, Any] | None = None
    status: dict[str, str] = field(default_factory=dict)
    record: Written | None = None


@dataclass
class LocomoWritten(Written):
    """What a LoCoMo write wrote, with the run it was written from.

    Attributes:
        run: the run as built (:class:`~locomo_exp.report.locomo_run.LocomoRun`): its card,
            summary and question rows are what MLflow logs, never a file read back.
    """

    run: LocomoRun | None = None


@dataclass(frozen=True)
class LocomoJudged:
    """The judge's result (``JudgeResult``) and its trust checks (``TrustSummary``)."""

    result: Any
    trust: Any = None


__all__ = ["JudgeErrorRateExceeded", "LocomoInput", "LocomoJudged", "LocomoWritten", "resolve_path"]
