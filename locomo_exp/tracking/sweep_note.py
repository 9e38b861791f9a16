"""The MLflow description of a sweep's parent run: each job's J and F1 vs the baseline.

It reads the rows of ``sweep_summary.json`` (:mod:`locomo_exp.sweep.summary`), so the
parent's page says what ``sweep_summary.md`` says, including each job's judge-check
warnings. Pure functions (no MLflow import).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.results.words import paid_words


def _cell(value: float | None, ci: Any, scale: float = 1.0) -> str:
    if value is None:
        return "not measured"
    text = f"{value * scale:.2f}"
    if ci:
        text += f" [{ci[0] * scale:.2f}, {ci[1] * scale:.2f}]"
    return text


def _vs(row: Mapping[str, Any], column: str, baseline_job: Any) -> str:
    if row.get("job") == baseline_job:
        return "baseline"
    cell = (row.get("vs_baseline") or {}).get(column) or {}
    if not cell.get("verdict"):
        return "not compared"
    verdict = {"A higher": "higher", "B higher": "lower"}.get(cell["verdict"], cell["verdict"])
    return f"{verdict} ({cell['diff']:+.2f})"


def _sweep_j(row: Mapping[str, Any], base_job: Any) -> tuple[str, bool]:
    """The J part of a job's line, and whether it is the input's stored J.

    Our judge's J when it ran; else the stored J of the input (another judge's verdicts,
    labelled "stored", compared in the ``stored_j`` column as in ``sweep_summary.md``);
    else "J not measured" with the reason.
    """
    if row.get("j_overall") is not None:
        j = _cell(row.get("j_overall"), row.get("j_ci"))
        return f"**J {j}** {_vs(row, 'j', base_job)}", False
    if row.get("stored_j_overall") is not None:
        stored = _cell(row.get("stored_j_overall"), None)
        return f"**stored J {stored}** {_vs(row, 'stored_j', base_job)}", True
    if isinstance(row.get("dry_run_estimate"), dict):
        return "J not measured (judge dry run: no call made)", False
    return "J not measured (no judge ran, no stored verdicts)", False


def sweep_description(summary: Mapping[str, Any], *, plot: str | None = None) -> str:
    """The sweep parent's description: J and F1 per swept value, vs the baseline job.

    It reads the same rows as ``sweep_summary.md``: a job without our judge's J shows
    the input's stored J (another judge's verdicts, labelled "stored") and its
    difference from the baseline's stored J.

    Args:
        summary: ``sweep_summary.json``'s content (rows with ``swept``, ``j_overall``,
            ``j_ci``, ``stored_j_overall``, ``f1``, ``f1_ci``, ``vs_baseline``; ``baseline``).
        plot: the sweep plot's file name when it was written (and logged), else ``None``.

    Returns:
        Markdown: one line naming the swept keys and the baseline, then one bullet per job
        (its swept values, J or stored J and F1 overall with 95% intervals, 0-100, each
        with its verdict vs the baseline and the difference in points, then the job's
        ``run_status`` when its own judge checks flagged its J); a job that did not
        complete shows its status, and what it paid when it failed after paying.
    """
    keys = list(summary.get("swept_keys") or [])
    baseline = summary.get("baseline") or {}
    base_job = baseline.get("job")
    base_text = (
        f"baseline: {baseline.get('label')}"
        if base_job is not None
        else "no baseline comparison" + (f" ({baseline['error']})" if baseline.get("error") else "")
    )
    n_warned = summary.get("n_warned") or 0
    lines = [
        f"Sweep over {', '.join(f'`{k}`' for k in keys) or 'nothing'}: "
        f"{summary.get('n_jobs')} job(s), {summary.get('n_failed')} failed"
        + (f", **{n_warned} with a flagged J (judge-check warnings)**" if n_warned else "")
        + f"; {base_text}.",
        "",
    ]
    any_stored = False
    for row in summary.get("rows") or []:
        swept = row.get("swept") or {}
        label = ", ".join(f"{k}={swept.get(k)}" for k in keys)
        if row.get("status") != "COMPLETED":
            paid = f" ({paid_words(row['paid'])})" if row.get("paid") else ""
            lines.append(f"- {label}: {row.get('status')}{paid}")
            continue
        j_text, stored = _sweep_j(row, base_job)
        any_stored = any_stored or stored
        f1 = (row.get("f1") or {}).get("overall")
        warned = row.get("warnings") or []
        lines.append(
            f"- {label}: {j_text}; F1 {_cell(f1, row.get('f1_ci'), 100.0)} "
            f"{_vs(row, 'f1', base_job)}"
            + (f" — **⚠ {row.get('run_status')}**" if warned else "")
        )
    units = {row.get("ci_unit") for row in summary.get("rows") or [] if row.get("ci_unit")}
    unit = {
        frozenset({"conversation"}): "conversation-cluster bootstrap",
        frozenset({"question"}): "bootstrap over questions (no conversation ids)",
    }.get(frozenset(units), "bootstrap (conversations where the input has conversation ids)")
    lines += [
        "",
        f"0-100, 95% {unit} intervals; vs baseline: conversation-cluster bootstrap and "
        "Holm-adjusted paired test."
        + (
            " Stored J: the verdicts stored in the input file by another judge (not re-judged)."
            if any_stored else ""
        )
        + " Table: `sweep_summary.md`"
        + (f"; plot: `{plot}`" if plot else "")
        + " (Artifacts).",
    ]
    return "\n".join(lines)


__all__ = ["sweep_description"]
