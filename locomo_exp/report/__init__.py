"""Markdown report: pure functions from the run's results (a ``RunSummary``) to text.

One module per section: :mod:`.header` (status, input, versions), :mod:`.lexical` (F1 and
BLEU-1 tables, stored verdicts), :mod:`.judge` (J), :mod:`.baselines` (comparisons with
published numbers, latency), :mod:`.uncertainty` (bootstrap intervals, judge reliability),
:mod:`.error_analysis` (error analysis), :mod:`.plots` (PNG figures); :mod:`.document` puts them in
order. Only :mod:`.plots` and :mod:`.outputs` (a run's files, via :mod:`.run_dir`) write files.
"""

from __future__ import annotations

from locomo_exp.report.baselines import (
    render_f1_comparison,
    render_j_comparison,
    render_latency_comparison,
)
from locomo_exp.report.document import render_report
from locomo_exp.report.error_analysis import render_error_analysis
from locomo_exp.report.format import fmt_num, fmt_pct, table_cell
from locomo_exp.report.header import render_header, render_status
from locomo_exp.report.judge import render_judge_section
from locomo_exp.report.lexical import render_lexical_table, render_stored_judge
from locomo_exp.report.uncertainty import render_reliability, render_uncertainty

__all__ = [
    "fmt_num",
    "fmt_pct",
    "render_error_analysis",
    "render_f1_comparison",
    "render_header",
    "render_j_comparison",
    "render_judge_section",
    "render_latency_comparison",
    "render_lexical_table",
    "render_reliability",
    "render_report",
    "render_status",
    "render_stored_judge",
    "render_uncertainty",
    "table_cell",
]
