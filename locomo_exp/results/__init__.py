"""Typed results of one run: what ``summary.json`` holds, as frozen dataclasses.

:class:`RunSummary` is built by :func:`locomo_exp.scoring.summary.build_summary` and read by the
report, the plots and the console table through attributes. Its :meth:`RunSummary.to_json`
is the one place that produces the ``summary.json`` layout (the contract MLflow metric names
and sweep summaries read), and :meth:`RunSummary.from_json` reads it back.

Layout (``schema_version`` 1)::

    {"schema_version": 1,
     "scales": {metric: "0-1" | "0-100"},                              # scales.py
     "input": {path, name, sha256, format, prediction_key, n_records, n_skipped_records,
               skipped, n_missing_predictions, missing_predictions, n_excluded_no_gold,
               excluded_no_gold},
     "versions": {metric: version text},
     "category_names": {"1": name, ...},
     "counts": {category key: questions}, "conversations": {"1".."5", "overall": n},
     "metrics": {metric: {category key: {mean, count, min, max}}},     # lexical, 0-1
     "latency": {field: {count, p50, p95, mean}},                      # seconds; tokens
     "stored_judge": {category key: {mean, count, min, max}}?,         # 0-100
     "stored_vs_recomputed": {stored field: {best, equal, ...}}?,     # 0-1
     "runs": {n_runs, files, lexical: {metric: {key: {per_run, mean, std}}}}?,
     "judge": {...the judge package's summary..., trust?: {...}}?,     # J 0-100
     "status": {part: "ok" | what happened},
     "analysis": {confidence, bootstrap_samples, seed, bootstrap, extremes,
                  disagreements?, reliability?}?}

Category keys are ``"1"``..``"5"``, ``"overall_1_4"`` and ``"overall"`` (see
`locomo_exp.benchmark.locomo.CATEGORY_GROUPS`). This package imports nothing from the rest of
``locomo_exp``, so every layer (scoring, judge, report, tracking) may use its types.

Modules: :mod:`.run` (the run summary, input, lexical groups, latency), :mod:`.judge`
(the judge's summary), :mod:`.trust` (the judge's trust: corrected J, panel, dry run, with
:mod:`.audit` and :mod:`.agreement` with labels and stored verdicts), :mod:`.analysis`
(bootstrap intervals, extremes, reliability), :mod:`.record` (one answered question, the
input of every scorer); :mod:`.convert` holds the JSON helpers they share. Import the types
from ``locomo_exp.results``.
"""

from locomo_exp.results.agreement import Agreement, AgreementResult, DisagreementRow, Rate
from locomo_exp.results.analysis import (
    Analysis,
    BootstrapCI,
    Extremes,
    QuestionBrief,
    Reliability,
)
from locomo_exp.results.audit import GATE_STATES, AuditKindResult, AuditResult, GateResult
from locomo_exp.results.judge import JudgeGroup, JudgeSummary
from locomo_exp.results.record import QARecord
from locomo_exp.results.run import (
    JUDGE_DRY_RUN,
    SCHEMA_VERSION,
    WARNING_PREFIX,
    ByCategory,
    GroupStats,
    InputInfo,
    LatencyStats,
    RunSummary,
    by_category_from_json,
    by_category_to_json,
    part_finished,
)
from locomo_exp.results.trust import (
    CallEstimate,
    CorrectedJResult,
    OlderTrustLayout,
    PanelPair,
    PanelSummary,
    TrustDryRun,
    TrustSummary,
)

__all__ = [
    "GATE_STATES",
    "JUDGE_DRY_RUN",
    "WARNING_PREFIX",
    "Agreement",
    "AgreementResult",
    "Analysis",
    "AuditKindResult",
    "AuditResult",
    "BootstrapCI",
    "ByCategory",
    "CallEstimate",
    "CorrectedJResult",
    "DisagreementRow",
    "Extremes",
    "GateResult",
    "GroupStats",
    "InputInfo",
    "JudgeGroup",
    "JudgeSummary",
    "LatencyStats",
    "OlderTrustLayout",
    "PanelPair",
    "PanelSummary",
    "QARecord",
    "QuestionBrief",
    "Rate",
    "Reliability",
    "RunSummary",
    "SCHEMA_VERSION",
    "TrustDryRun",
    "TrustSummary",
    "by_category_from_json",
    "by_category_to_json",
    "part_finished",
]
