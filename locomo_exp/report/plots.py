"""PNG plots referenced from the report (matplotlib, headless ``Agg`` backend), as bytes.

Each plot is drawn from the built run (its summary or rows) and returned as PNG bytes: the
writer writes them and embeds the same bytes in ``report.html``, reading no file back.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.config import BaselineMetric, BaselineSet
from locomo_exp.report.baselines import values_by_category
from locomo_exp.results import RunSummary

CATEGORY_PLOT = "category_scores.png"
J_DISTRIBUTION_PLOT = "j_distribution.png"


def new_figure(**kwargs: Any) -> Any:
    """A ``matplotlib.figure.Figure`` drawn with the headless Agg canvas (no pyplot).

    Importing ``matplotlib.pyplot`` costs about a third of a second and keeps global
    state; a plain ``Figure`` saves to PNG through Agg without it.

    Args:
        kwargs: passed to ``Figure`` (``figsize``...).

    Returns:
        The figure.
    """
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def png_bytes(figure: Any) -> bytes:
    """The figure as PNG bytes (100 dpi, Agg), for the writer to write and embed.

    Args:
        figure: a ``matplotlib.figure.Figure`` (:func:`new_figure`).

    Returns:
        The PNG file's bytes.
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=100, format="png")
    return buffer.getvalue()


def _our_series(summary: RunSummary, metric: str, scale: float) -> dict[int, float]:
    """Per-category means of a lexical metric or of J (``metric="j"``), times ``scale``."""
    if metric == "j":
        groups = {k: g.mean for k, g in (summary.judge.j if summary.judge else {}).items()}
    else:
        groups = {k: g.mean for k, g in summary.metrics.get(metric, {}).items()}
    return {
        int(key): mean * scale for key, mean in groups.items() if key.isdigit() and mean is not None
    }


def plot_category_scores(
    summary: RunSummary, baselines: Mapping[str, BaselineSet]
) -> bytes | None:
    """Grouped bars per category id: this run next to each baseline system with categories.

    One panel per metric present (F1, in each baseline's own variant; J). Values in percent.

    Args:
        summary: the run summary.
        baselines: selected baseline sets.

    Returns:
        The PNG's bytes (written as :data:`CATEGORY_PLOT`), or ``None`` when there is
        nothing to plot.
    """
    panels: list[tuple[str, dict[str, dict[int, float]]]] = []
    f1_sets = [
        b for b in baselines.values() if b.metric == BaselineMetric.f1 and b.label_to_category
    ]
    if summary.metrics:
        variant = f1_sets[0].f1_variant.value if f1_sets and f1_sets[0].f1_variant else "locomo"
        series = {f"this run (f1_{variant})": _our_series(summary, f"f1_{variant}", 100.0)}
        for baseline in f1_sets:
            for system in baseline.systems:
                if system.categories:
                    series[system.name] = values_by_category(baseline, system)
        panels.append((f"F1 (percent, {variant} variant)", series))
    if summary.judge is not None and summary.judge.j:
        series = {"this run (J)": _our_series(summary, "j", 1.0)}
        for baseline in baselines.values():
            if baseline.metric == BaselineMetric.j:
                for system in baseline.systems:
                    if system.categories:
                        series[system.name] = values_by_category(baseline, system)
        panels.append(("J (0-100)", series))
    panels = [(title, s) for title, s in panels if any(s.values())]
    if not panels:
        return None
    figure = new_figure(figsize=(10, 4 * len(panels)))
    axes = figure.subplots(len(panels), 1, squeeze=False)
    colours = _colours([name for _, series in panels for name in series])
    note = _sample_note(summary)
    for axis, (title, series) in zip(axes[:, 0], panels, strict=True):
        categories = sorted({c for values in series.values() for c in values})
        width = 0.8 / max(len(series), 1)
        for index, (name, values) in enumerate(series.items()):
            xs = [categories.index(c) + index * width for c in categories if c in values]
            axis.bar(
                xs, [values[c] for c in categories if c in values], width, label=name,
                color=colours[_system(name)],
            )
        axis.set_xticks([i + 0.4 - width / 2 for i in range(len(categories))])
        axis.set_xticklabels([f"{c} {summary.category_names.get(str(c), '')}" for c in categories])
        judged = title.startswith("J") and len(series) > 1
        axis.set_title(title + note + ("; baselines: their own judges" if judged else ""))
        axis.set_ylim(0, 100)
        axis.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    return png_bytes(figure)


def plot_j_distribution(rows: Sequence[dict[str, Any]]) -> bytes | None:
    """Histogram of per-question J (mean over runs, 0-100).

    Args:
        rows: per-question rows with ``j_mean``.

    Returns:
        The PNG's bytes (written as :data:`J_DISTRIBUTION_PLOT`), or ``None`` when no
        question has a J.
    """
    values = [row["j_mean"] for row in rows if row.get("j_mean") is not None]
    if not values:
        return None
    figure = new_figure(figsize=(7, 3.5))
    axis = figure.subplots()
    axis.hist(values, bins=20, range=(0, 100))
    axis.set_xlabel("per-question J (mean over runs, 0-100)")
    axis.set_ylabel("questions")
    figure.tight_layout()
    return png_bytes(figure)


def _system(name: str) -> str:
    """The system a series shows: both panels' "this run (...)" are one system."""
    return "this run" if name.startswith("this run") else name


def _colours(names: Sequence[str]) -> dict[str, str]:
    """One colour per system in every panel (matplotlib's ``C0``.. cycle, this run first)."""
    systems = list(dict.fromkeys(_system(n) for n in names))
    return {system: f"C{index % 10}" for index, system in enumerate(systems)}


def _sample_note(summary: RunSummary) -> str:
    """A title line for a subset: ``this run: a 200-question sample; baselines: full benchmark``."""
    subset = summary.input.to_json().get("subset")
    if not subset:
        return ""
    return f"\nthis run: a {summary.counts['overall']}-question sample; baselines: full benchmark"
