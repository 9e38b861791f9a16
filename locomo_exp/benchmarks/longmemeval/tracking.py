"""MLflow names of a LongMemEval run's figures (pure; no MLflow import).

Scale: percent (0-100), as every score metric of the project (:mod:`.metrics`). A name means the
same verdicts in every run: this project's judge's accuracies are ``lme_j/overall``,
``lme_j/task_avg``, ``lme_j/abstention`` and ``lme_j/<question_type>`` (with
``_ci_low``/``_ci_high`` bounds), a file's stored verdicts' the same under ``lme_stored/``;
a run has either or both. Input counts and the panel are under ``lme/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.benchmarks.longmemeval.facts import QUESTION_TYPES, variant_label
from locomo_exp.tracking.headline import description_tail, interval_text, warning_lead
from locomo_exp.tracking.names import finite_metrics, format_param

PREFIX = "lme"
"""Prefix of what is not a verdict's figure: input counts, the judge panel."""

JUDGE_PREFIX = "lme_j"
"""Prefix of this project's judge's figures, in every run (absent when it did not judge)."""

STORED_PREFIX = "lme_stored"
"""Prefix of the figures of a file's stored verdicts, in every run (absent without them)."""

SOURCE_PREFIXES = {"judge": JUDGE_PREFIX, "stored": STORED_PREFIX}
"""``summary.json``'s verdict source (``headline.source``) -> the prefix of its figures."""

PERCENT = 100.0


def _entry(out: dict[str, Any], name: str, figure: Mapping[str, Any]) -> None:
    for suffix, key in (("", "accuracy"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high")):
        value = figure.get(key)
        out[f"{name}{suffix}"] = None if value is None else float(value) * PERCENT


def _all_types(task_avg: Mapping[str, Any]) -> bool:
    """Whether a task average covers every LongMemEval question type."""
    return len(task_avg.get("types") or ()) >= len(QUESTION_TYPES)


def accuracy_metrics(figures: Mapping[str, Any], prefix: str) -> dict[str, float]:
    """Metrics of one set of LongMemEval figures.

    Args:
        figures: :meth:`.scoring.LmeAccuracies.to_json` (rates on 0-1).
        prefix: ``lme_j`` or ``lme_stored`` (:data:`SOURCE_PREFIXES`).

    Returns:
        ``{"lme_j/overall": 72.4, "lme_j/overall_ci_low": ..., "lme_j/task_avg": ...,
        "lme_j/abstention": ..., "lme_j/<type>": ..., "lme_j/questions": 500}``, finite
        values only; ``task_avg`` only when all 6 question types are present (the mean
        over fewer is not LongMemEval's task-averaged accuracy).
    """
    out: dict[str, Any] = {}
    for key in ("overall", "task_avg", "abstention"):
        if key == "task_avg" and not _all_types(figures[key]):
            continue  # a mean over fewer than the 6 types is not the task average
        _entry(out, f"{prefix}/{key}", figures[key])
    for name, figure in figures["per_type"].items():
        _entry(out, f"{prefix}/{name}", figure)
    out[f"{prefix}/questions"] = figures["overall"]["n"]
    return finite_metrics(out)


def run_metrics(summary: Mapping[str, Any]) -> dict[str, float]:
    """Every metric of a LongMemEval run from its ``summary.json`` layout.

    Args:
        summary: the run's summary (``headline``, ``stored``, ``judge``, ``input``).

    Returns:
        This project's judge's figures under ``lme_j/`` with its audit
        (``lme_j/audit/<kind>_agreed``, ``lme_j/corrected_overall``), the stored verdicts'
        under ``lme_stored/``, the agreement of the headline verdicts with human labels
        under their source's prefix (``<prefix>/labels_agreement``, ``_kappa``,
        ``labels_corrected_overall``), the panel (``lme/panel/<preset>/overall``) and the
        input counts (``lme/skipped_ids``, ``lme/unanswered``).
    """
    out: dict[str, float] = {}
    judge = summary.get("judge") or {}
    if judge.get("figures"):  # not a dry run's
        out.update(accuracy_metrics(judge["figures"], JUDGE_PREFIX))
    if summary.get("stored"):
        out.update(accuracy_metrics(summary["stored"]["figures"], STORED_PREFIX))
    audit = summary.get("audit")
    if audit:
        for kind, row in audit["kinds"].items():
            if row["agreed"]["rate"] is not None:
                out[f"{JUDGE_PREFIX}/audit/{kind}_agreed"] = row["agreed"]["rate"] * PERCENT
        corrected = audit.get("corrected_overall") or {}
        if corrected.get("accuracy") is not None:
            out[f"{JUDGE_PREFIX}/corrected_overall"] = corrected["accuracy"] * PERCENT
    for member in summary.get("panel") or []:
        value = member["figures"]["overall"]["accuracy"]
        if value is not None:
            out[f"{PREFIX}/panel/{member['preset']}/overall"] = value * PERCENT
    labels = summary.get("labels") or {}
    if labels.get("n"):  # the headline verdicts against the labels: named by their source
        source = SOURCE_PREFIXES[(summary.get("headline") or {}).get("source", "stored")]
        out[f"{source}/labels_agreement"] = labels["agreement"]["rate"] * PERCENT
        if labels.get("kappa") is not None:
            out[f"{source}/labels_kappa"] = float(labels["kappa"])
        corrected = labels.get("corrected_overall") or {}
        if corrected.get("accuracy") is not None:
            out[f"{source}/labels_corrected_overall"] = corrected["accuracy"] * PERCENT
    counts = summary["input"]["counts"]
    out[f"{PREFIX}/skipped_ids"] = float(counts["skipped_ids"])
    out[f"{PREFIX}/unanswered"] = float(counts["unanswered"])
    return out


def compare_metrics(pairs: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Metrics of a LongMemEval comparison: per pair and figure, A - B in points.

    Args:
        pairs: :meth:`.compare.LmePairComparison.to_json` of each pair.

    Returns:
        ``{"lme_compare/<B>/overall_diff": 10.4, ..._ci_low, ..._ci_high, ..._mcnemar_p}``.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        for row in pair["rows"]:
            name = f"lme_compare/{pair['b']}/{row['figure']}"
            out[f"{name}_diff"] = row["diff"]
            out[f"{name}_diff_ci_low"], out[f"{name}_diff_ci_high"] = row["ci"]
            out[f"{name}_mcnemar_p"] = row["mcnemar_p"]
    return finite_metrics(out)


def _stored_text(source: Mapping[str, Any] | None) -> str:
    if not source:
        return ""
    return f"; stored verdicts read from `{source.get('field')}`, judge: {source.get('text')}"


def run_description(
    metrics: Mapping[str, float], summary: Mapping[str, Any], card: Mapping[str, Any]
) -> str:
    """The MLflow run page's description of a LongMemEval run (as LoCoMo's says its result).

    Args:
        metrics: :func:`run_metrics` (percent).
        summary: the run's ``summary.json``.
        card: its ``card.json``.

    Returns:
        Markdown: ``**overall 72.40** [68.32, 76.14] · task-averaged 72.75 · abstention 70.00
        (percent; 95% Wilson intervals)``, the verdicts and their judge, the questions and
        dataset variant, then :func:`~.headline.description_tail` (judge, tool and command,
        status). Without verdicts: "accuracy not measured" and why.
    """
    prefix = SOURCE_PREFIXES[(summary.get("headline") or {}).get("source", "stored")]
    overall = metrics.get(f"{prefix}/overall")
    if overall is None:
        head = f"accuracy not measured ({summary['status'].get('j')})"
    else:
        parts = [f"**overall {overall:.2f}**{interval_text(metrics, f'{prefix}/overall')}"]
        task_avg = ((summary.get("headline") or {}).get("figures") or {}).get("task_avg") or {}
        for key, label in (("task_avg", "task-averaged"), ("abstention", "abstention")):
            value = metrics.get(f"{prefix}/{key}")
            why = (
                f" ({len(task_avg.get('types') or ())} of {len(QUESTION_TYPES)} question types "
                "present)" if key == "task_avg" and not _all_types(task_avg) else ""
            )
            parts.append(f"{label} {'not measured' + why if value is None else f'{value:.2f}'}")
        head = " · ".join(parts) + " (percent; 95% Wilson intervals)"
    ref = summary["input"]["reference"]
    name = str(summary["input"]["path"]).rsplit("/", 1)[-1]
    counts = summary["input"]["counts"]
    subset = (
        [f"**Subset: {counts['matched']} of {counts['matched'] + counts['unanswered']} "
         "reference questions scored: not comparable with full-benchmark figures.**", ""]
        if counts.get("unanswered") else []
    )
    lines = [
        *warning_lead(summary.get("warnings") or ()),  # MLflow shows such a run "Finished"
        head,
        "",
        *subset,
        f"Verdicts: {card.get('verdicts')}" + _stored_text(card.get("stored_judge_source")),
        "",
        f"Questions: {summary['input']['counts']['matched']} scored from `{name}` "
        f"(LongMemEval; dataset variant: {variant_label(str(ref['variant']))})",
    ]
    lines += description_tail(
        card, summary["status"], "Everything measured: `report.md` (Artifacts)."
    )
    return "\n".join(lines)


def run_params(
    summary: Mapping[str, Any], card: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """Params of a LongMemEval run.

    Args:
        summary: the run's ``summary.json``.
        card: its ``card.json``, for the tool's version and git commit (left out without).

    Returns:
        ``data.file`` (the answer file's name), ``lme.variant``, ``lme.reference_sha256``,
        ``input.sha256``, ``lme.metric_version``, ``lme.verdicts`` (their source and judge:
        what ``scorer`` chose), ``stored_judge.field`` and ``stored_judge.judge`` (what is
        known of the stored verdicts' judge), ``tool.version``, ``tool.git_commit``; unknown
        values left out. No tag repeats one of them: the benchmark is the run's ``benchmark``
        tag (as every pipeline benchmark's), and the tags ``data.file``,
        ``locomo_exp.version`` and ``scorer`` are no longer set (docs/mlflow.md).
    """
    ref = summary["input"]["reference"]
    params = {
        "data.file": format_param(str(summary["input"]["path"]).rsplit("/", 1)[-1]),
        "lme.variant": str(ref["variant"]),
        "lme.reference_sha256": str(ref["sha256"]),
        "input.sha256": str(summary["input"]["sha256"]),
        "lme.metric_version": str(summary["versions"]["metrics"]),
    }
    headline = summary.get("headline")
    if headline:
        params["lme.verdicts"] = f"{headline['source']} ({headline['judge_model']})"
    source = (summary.get("stored") or {}).get("judge_source") or {}
    tool = (card or {}).get("tool") or {}
    for name, value in (
        ("stored_judge.field", source.get("field")),
        ("stored_judge.judge", source.get("text")),
        ("tool.version", tool.get("version")),
        ("tool.git_commit", tool.get("git_commit")),
    ):
        if value:
            params[name] = format_param(value)
    return params


__all__ = [
    "JUDGE_PREFIX",
    "PREFIX",
    "SOURCE_PREFIXES",
    "STORED_PREFIX",
    "accuracy_metrics",
    "compare_metrics",
    "run_description",
    "run_metrics",
    "run_params",
]
