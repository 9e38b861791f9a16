"""LoCoMo-Plus's MLflow names: metrics (percent, 0-100), params and tags from ``summary.json``.

Pure; :mod:`.job` logs them through :mod:`locomo_exp.tracking`'s helpers.
"""

from __future__ import annotations

from typing import Any

from locomo_exp.tracking import PERCENT, finite_metrics, metric_name


def run_metrics(summary: dict[str, Any]) -> dict[str, float]:
    """The run's metrics, in percent, and the parser's counts.

    Each reading's overall, Cognitive, categories, relation types, both factual averages
    and gaps.

    Names: ``<reading>/overall``, ``<reading>/category/<name>``,
    ``<reading>/relation/<name>``, ``<reading>/factual_unweighted``, ...,
    ``parser/derived_from_api_errors``, ``stored/api_errors``; with ``scorer=both``
    ``f1_<variant>/category/<name>``, ``f1_<variant>/factual_unweighted`` and
    ``f1_<variant>/factual_item_weighted`` (percent; factual items only). Figures not
    measured are not logged.
    """
    out: dict[str, Any] = {}
    for name, f in summary["readings"].items():
        out[f"{name}/overall"] = _pct(f["overall"])
        out[f"{name}/cognitive"] = _pct(f["cognitive"])
        out[f"{name}/n_scored"] = f["n_scored"]
        for cat, group in f["by_category"].items():
            out[metric_name(f"{name}/category/{cat}")] = _pct(group["mean"])
        for rel, group in f["by_relation"].items():
            out[f"{name}/relation/{rel}"] = _pct(group["mean"])
        for key in ("unweighted", "item_weighted"):
            out[f"{name}/factual_{key}"] = _pct(f["factual"][key])
            out[f"{name}/gap_{key}"] = _pct(f["gap"][key])
    f1 = summary.get("f1")
    if f1:
        name = f"f1_{f1['variant']}"
        for cat, group in f1["by_category"].items():
            out[metric_name(f"{name}/category/{cat}")] = _pct(group["mean"])
        for key in ("unweighted", "item_weighted"):
            out[f"{name}/factual_{key}"] = _pct(f1["factual"][key])
    parser = summary["parser"]
    out["stored/api_errors"] = parser["api_errors"]
    out["parser/derived_from_api_errors"] = parser["derived_from_api_errors"]
    out["parser/derived_from_no_label"] = parser["derived_from_no_label"]
    counts = (summary.get("judge") or {}).get("counts") or {}
    for key in ("calls_made", "cache_hits", "api_error"):
        if key in counts:
            out[f"judge/{key}"] = counts[key]
    return finite_metrics(out)


def _pct(value: float | None) -> float | None:
    return None if value is None else round(value * PERCENT, 2)


def run_params(summary: dict[str, Any]) -> dict[str, str]:
    """The run's params: benchmark, layout, parser, verdict source, metric version, input."""
    return {
        "benchmark": str(summary["benchmark"]),
        "data.layout": str(summary["input"]["layout"]),
        "data.sha256": str(summary["input"]["sha256"]),
        "judge.parser": str(summary["parser"]["name"]),
        "verdicts": str(summary["verdicts"]["label"])[:500],
        "metric_version": str(summary["versions"]["metrics"]),
        **({"f1.variant": str(summary["f1"]["variant"]),
            "f1.version": str(summary["f1"]["version"])} if summary.get("f1") else {}),
        **{f"judge.{key}": str(value) for key, value in (summary.get("judge") or {}).items()
           if key in ("model", "provider", "protocol", "prompt_version", "temperature",
                      "max_tokens", "runs", "mode")},
    }


def run_tags(summary: dict[str, Any]) -> dict[str, str]:
    """The run's tags: the benchmark and the file's name."""
    return {"benchmark": str(summary["benchmark"]),
            "data.file": str(summary["input"]["path"]).rsplit("/", 1)[-1]}
