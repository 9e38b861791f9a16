"""The files of one LoCoMo run: scores, summary, report (Markdown and HTML), config, card, plots.

:func:`write_locomo_run` renders and writes them from a run built once
(:func:`locomo_exp.report.locomo_run.build_locomo_run`): it computes no statistic and reads
back no file it wrote (issue 26 §3). Every file is written atomically. LoCoMo's job hooks
(:mod:`locomo_exp.benchmarks.locomo.steps`) build and write before and after the judge.
"""

from __future__ import annotations

import json
from pathlib import Path

from locomo_exp.report.document import render_report
from locomo_exp.report.html import render_report_html
from locomo_exp.report.locomo_run import LocomoRun
from locomo_exp.report.plots import (
    CATEGORY_PLOT,
    J_DISTRIBUTION_PLOT,
    plot_category_scores,
    plot_j_distribution,
)
from locomo_exp.report.run_dir import atomic_path, atomic_write_jsonl, atomic_write_text

OUTPUT_FILES = ("report.md", "scores.jsonl", "summary.json", "config.yaml")
"""Files written to the output directory of every run."""
CARD_FILE = "card.json"
REPORT_HTML = "report.html"
"""The report as one HTML page with its plots inline (MLflow's artifact viewer renders it)."""


def _write_plots(run: LocomoRun, output_dir: Path) -> dict[str, bytes]:
    """Draw the run's plots and write them; without plots, remove an earlier attempt's.

    Returns:
        PNG bytes by file name, of the plots drawn (``report.html`` embeds them).
    """
    if not run.plots:  # no plot of an earlier attempt beside a report that does not show it
        for name in (CATEGORY_PLOT, J_DISTRIBUTION_PLOT):
            (output_dir / name).unlink(missing_ok=True)
        return {}
    drawn = {
        name: png
        for name, png in (
            (CATEGORY_PLOT, plot_category_scores(run.summary, run.baselines)),
            (J_DISTRIBUTION_PLOT, plot_j_distribution(run.rows)),
        )
        if png is not None
    }
    for name, png in drawn.items():
        with atomic_path(output_dir / name) as temporary:
            temporary.write_bytes(png)
    return drawn


def write_locomo_run(run: LocomoRun, output_dir: Path) -> list[Path]:
    """Write every output file of a built run into ``output_dir``, each atomically.

    Renders ``report.md`` (:func:`locomo_exp.report.document.render_report`), ``report.html``
    (the same text, the plots' bytes inline), ``summary.json`` and ``card.json`` (2-space
    JSON, UTF-8), ``scores.jsonl``, ``config.yaml`` and the plots (PNG): a pure function of
    ``run``, so writing the same run twice gives the same files.

    Args:
        run: the run as built (:func:`locomo_exp.report.locomo_run.build_locomo_run`).
        output_dir: the run's directory (already checked writable).

    Returns:
        The paths written: ``report.md``, ``scores.jsonl``, ``summary.json``,
        ``config.yaml``, ``card.json``, ``report.html``, then the plots drawn.

    Raises:
        OSError: when a file cannot be written (no file is left truncated).
    """
    drawn = _write_plots(run, output_dir)
    paths = [output_dir / name for name in OUTPUT_FILES]
    report, scores, summary_path, config_path = paths
    # each file atomically (temp name + os.replace): a failure never leaves a truncated file
    atomic_write_jsonl(scores, run.rows)
    atomic_write_text(summary_path,
                      json.dumps(run.summary_json, indent=2, ensure_ascii=False) + "\n")
    report_text = render_report(run.summary, run.baselines, list(drawn), run.card,
                                run.answer_key)
    atomic_write_text(report, report_text)
    html_path = output_dir / REPORT_HTML
    atomic_write_text(html_path, render_report_html(report_text, drawn, run.title))
    atomic_write_text(config_path, run.config_text)
    atomic_write_text(output_dir / CARD_FILE,
                      json.dumps(run.card, indent=2, ensure_ascii=False) + "\n")
    paths += [output_dir / CARD_FILE, html_path]
    paths += [output_dir / name for name in drawn]
    return paths


__all__ = ["CARD_FILE", "OUTPUT_FILES", "REPORT_HTML", "write_locomo_run"]
