"""The command-line layer: turns a Hydra config into a job and prints what a user needs."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue

from locomo_exp.config import to_experiment_config
from locomo_exp.data import DataValidationError
from locomo_exp.experiment import ExperimentResult, JudgeErrorRateExceeded, run_experiment
from locomo_exp.records import CATEGORY_IDS

log = logging.getLogger(__name__)


def console_table(summary: dict[str, Any]) -> str:
    """A short per-category table of the headline metrics (percent), for the terminal."""
    names = summary["category_names"]
    metrics = summary["metrics"]
    judge = (summary.get("judge") or {}).get("j") or {}
    columns: list[tuple[str, Any]] = []
    if "f1" in metrics:
        columns.append(("F1", lambda key: metrics["f1"][key]["mean"], 100.0))
    if "bleu1" in metrics:
        columns.append(("BLEU-1", lambda key: metrics["bleu1"][key]["mean"], 100.0))
    if judge:
        judged = sorted((summary.get("judge") or {}).get("categories") or [])
        overall_key = {(1, 2, 3, 4): "overall_1_4", (1, 2, 3, 4, 5): "overall"}.get(tuple(judged))

        def j_mean(key: str) -> Any:
            # the judge pools its overall over the judged categories only
            if key.startswith("overall"):
                return (judge.get("overall") or {}).get("mean") if key == overall_key else None
            return (judge.get(key) or {}).get("mean")

        columns.append(("J", j_mean, 1.0))
    header = f"{'category':<18}{'n':>6}" + "".join(f"{title:>10}" for title, _, _ in columns)
    lines = [header, "-" * len(header)]
    for key in [*(str(c) for c in CATEGORY_IDS), "overall_1_4", "overall"]:
        label = f"{key} {names.get(key, '')}" if key.isdigit() else key
        cells = ""
        for _, getter, scale in columns:
            value = getter(key)
            cells += f"{'n/a' if value is None else format(value * scale, '.2f'):>10}"
        lines.append(f"{label:<18}{summary['counts'][key]:>6}{cells}")
    return "\n".join(lines)


def print_result(result: ExperimentResult) -> None:
    """Print the table, where the outputs are, and how to open MLflow."""
    summary = result.summary
    print(f"\nScored {summary['counts']['overall']} questions from {summary['input']['path']}")
    if "f1" in summary["versions"]:
        print(f"F1: {summary['versions']['f1']} (percent)")
    print(console_table(summary))
    print(f"\nReport: {result.report_path}")
    if result.tracking_uri:
        print(
            f"MLflow: run {result.run_id} in experiment '{result.experiment}'.\n"
            f"  Open the UI with: mlflow ui --backend-store-uri {result.tracking_uri}"
        )


def run_from_hydra(cfg: DictConfig) -> ExperimentResult:
    """Entry point called by ``locomo_exp/__main__.py``.

    Expected errors (bad input, judge configuration, API failures) are printed as one
    clear message and end the process with exit code 1; nothing is retried.
    """
    for noisy in ("httpx2", "httpx", "httpcore2", "httpcore", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)  # one INFO line per API call otherwise
    try:
        typed = to_experiment_config(cfg)
    except MissingMandatoryValue as error:
        key = error.full_key or "a required value"
        print(f"error: {key} is required (e.g. {key}=path/to/results.json)", file=sys.stderr)
        raise SystemExit(2) from None
    output_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        result = run_experiment(typed, output_dir, Path.cwd())
    except (DataValidationError, JudgeErrorRateExceeded, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    print_result(result)
    return result
