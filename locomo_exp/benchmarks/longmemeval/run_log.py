"""LongMemEval's run log: the typed :class:`~locomo_exp.results.run_log.RunLog` of its summary.

Built from the ``summary.json`` content :func:`.summary.build_lme_summary` makes and the job
completes (panel, audit, labels, checks; also from a version-1 file, written before the log:
the same sections), copying its figures; computes nothing. The headline figures are named
and scaled as a sweep's parent run names them: ``lme_j/<figure>`` (this project's judge) or
``lme_stored/<figure>`` (the file's stored verdicts), percent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.results.run_log import (
    Figure,
    GroupResult,
    InputFile,
    MetricResult,
    RunLog,
    RunSpec,
    TrustBrief,
    judge_spend,
)

PERCENT = 100.0
TITLE = "LongMemEval"
HEADLINE_FIGURES = ("overall", "task_avg", "abstention")
"""The figures of the headline verdicts a sweep's parent run shows, in order."""


def _pct(value: Any) -> float | None:
    return float(value) * PERCENT if isinstance(value, (int, float)) else None


def _group(figure: Mapping[str, Any]) -> GroupResult:
    return GroupResult(n=int(figure.get("n") or 0), value=figure.get("accuracy"),
                       ci_low=figure.get("ci_low"), ci_high=figure.get("ci_high"))


def _accuracy(source: str, figures: Mapping[str, Any]) -> MetricResult:
    """One verdict source's accuracy by question type, ``overall`` and ``abstention``."""
    groups = {str(k): _group(g) for k, g in (figures.get("per_type") or {}).items()}
    for key in ("overall", "abstention"):
        if isinstance(figures.get(key), Mapping):
            groups[key] = _group(figures[key])
    return MetricResult(
        title=f"accuracy of the {source} verdicts (share judged correct, 0-1)", unit="0-1",
        interval="95% Wilson score interval per group", groups=groups)


def _headline(prefix: str, figures: Mapping[str, Any]) -> list[Figure]:
    out = []
    for key in HEADLINE_FIGURES:
        figure = figures.get(key) or {}
        out.append(Figure(name=f"{prefix}/{key}", value=_pct(figure.get("accuracy")),
                          unit="0-100", ci_low=_pct(figure.get("ci_low")),
                          ci_high=_pct(figure.get("ci_high")), n=figure.get("n")))
    return out


def _trust(summary: Mapping[str, Any], warnings: list[str]) -> TrustBrief | None:
    audit, labels = summary.get("audit"), summary.get("labels")
    if not isinstance(audit, Mapping) and not isinstance(labels, Mapping):
        return None
    audit = audit if isinstance(audit, Mapping) else {}
    specificity = (audit.get("specificity") or {}).get("rate")
    sensitivity = (audit.get("sensitivity") or {}).get("rate")
    corrected = (labels or {}).get("corrected_overall") or audit.get("corrected_overall")
    return TrustBrief(
        false_accept_rate=None if specificity is None else 1.0 - specificity,
        false_reject_rate=None if sensitivity is None else 1.0 - sensitivity,
        corrected=None if not corrected else Figure(
            name="corrected/overall", value=corrected.get("accuracy"), unit="0-1",
            ci_low=corrected.get("ci_low"), ci_high=corrected.get("ci_high")),
        warnings=warnings,
    )


def lme_run_log(summary: Mapping[str, Any]) -> RunLog:
    """The run log of a LongMemEval run.

    Args:
        summary: the run's ``summary.json`` content, or a version-1 file's.

    Returns:
        :class:`RunLog`: metrics ``lme_stored`` and ``lme_j`` (accuracy 0-1 by question type,
        ``overall`` and ``abstention``, Wilson intervals) for the verdicts the run has;
        headline: overall, task-averaged and abstention accuracy of the headline verdicts
        (percent); the judge's spend (a dry run: its estimate); the audit's rates
        (false accept = 1 - specificity) and the corrected accuracy (labels first).

    Raises:
        KeyError: when ``input`` is missing.
    """
    judge = summary.get("judge") or {}
    settings = judge.get("settings") or {}
    stored = summary.get("stored") or {}
    metrics: dict[str, MetricResult] = {}
    if stored.get("figures"):
        metrics["lme_stored"] = _accuracy("stored", stored["figures"])
    if judge.get("figures"):
        metrics["lme_j"] = _accuracy("judge's", judge["figures"])
    headline = summary.get("headline") or {}
    prefix = "lme_j" if headline.get("source") == "judge" else "lme_stored"
    warnings = [str(w) for w in summary.get("warnings") or ()]
    status = {str(k): str(v) for k, v in (summary.get("status") or {}).items()}
    spend = None
    if judge:
        spend = judge_spend([settings], status=status.get("judge", "ok"),
                            dry_run_estimate=judge.get("dry_run_estimate"))
    inp = summary["input"]
    return RunLog(
        benchmark=lme.NAME,
        title=TITLE,
        spec=RunSpec(
            scorer="judge" if judge else "stored verdicts",
            judge_model=settings.get("model"),
            judge_protocol=settings.get("protocol"),
            judge_runs=settings.get("runs"),
        ),
        input=InputFile(path=str(inp["path"]), sha256=str(inp["sha256"]),
                        format=str(inp.get("format")),
                        records=int((inp.get("counts") or {}).get("matched") or 0)),
        metrics=metrics,
        headline=_headline(prefix, headline.get("figures") or {}) if headline else [],
        judge=spend,
        trust=_trust(summary, warnings),
        warnings=warnings,
        status=status,
    )


def with_run_log(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with its typed ``run_log`` (re)built last (changed in place, returned)."""
    summary.pop("run_log", None)
    summary["run_log"] = lme_run_log(summary).to_json()
    return summary


__all__ = ["HEADLINE_FIGURES", "lme_run_log", "with_run_log"]
