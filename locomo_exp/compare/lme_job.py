"""``mode=compare`` of LongMemEval run directories: compare, write ``compare.md``/``.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_exp.compare.lme import compare_lme_runs, is_lme_run
from locomo_exp.config import CompareConfig
from locomo_exp.report.lme_compare import render_lme_compare
from locomo_exp.report.run_dir import atomic_write_text


@dataclass
class LmeCompareJob:
    """A finished LongMemEval comparison.

    Attributes:
        pairs: each pair's comparison as JSON.
        markdown: path of ``compare.md``; json_path: of ``compare.json``.
    """

    pairs: list[dict[str, Any]]
    markdown: Path
    json_path: Path


def lme_run_dirs(cfg: CompareConfig, start_dir: Path) -> list[Path] | None:
    """The run directories of ``compare.runs`` when any is a LongMemEval run, else ``None``."""
    paths = [Path(r) if Path(r).is_absolute() else start_dir / r for r in map(str, cfg.runs)]
    return paths if any(is_lme_run(p) for p in paths) else None


def run_lme_compare(cfg: CompareConfig, run_dirs: list[Path], output_dir: Path) -> LmeCompareJob:
    """Compare LongMemEval runs (the first with each other) and write the outputs.

    Raises:
        locomo_exp.compare.CompareError: a run that is not a LongMemEval run, or no shared
            question (one line).
    """
    pairs = [
        p.to_json()
        for p in compare_lme_runs(run_dirs, bootstrap_samples=cfg.bootstrap_samples, seed=cfg.seed)
    ]
    output_dir.mkdir(parents=True, exist_ok=True)
    markdown = atomic_write_text(output_dir / "compare.md", render_lme_compare(pairs))
    body = {"benchmark": "longmemeval", "runs": [str(p) for p in run_dirs], "pairs": pairs}
    json_path = atomic_write_text(
        output_dir / "compare.json", json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    )
    return LmeCompareJob(pairs, markdown, json_path)


__all__ = ["LmeCompareJob", "lme_run_dirs", "run_lme_compare"]
