"""What every plug-in that reads one results file states the same way: its names and its claim.

A plug-in subclasses :class:`FilePlugin` and gives :meth:`FilePlugin.detects` (a cheap look at
a file); the name, the title, the ``data.format`` that names it and :meth:`FilePlugin.claims`
(an explicit ``data.format`` first, then detection of the one ``data.path``) come from here.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.data import expand_paths

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig


def single_data_file(cfg: ExperimentConfig, start_dir: Path) -> Path | None:
    """The job's one ``data.path`` file, or ``None`` (none, several, a glob error, ``data.runs``).

    Args:
        cfg: the typed config.
        start_dir: the directory relative paths are resolved against.
    """
    if cfg.data.runs or not cfg.data.path or cfg.data.path == "???":
        return None
    try:
        paths = expand_paths(cfg.data.path, start_dir)
    except (ValueError, OSError):
        return None
    return paths[0] if len(paths) == 1 else None


SUMMARY_PEEK_BYTES = 4096
"""Bytes of a run directory's ``summary.json`` read to see which benchmark wrote it."""


def compare_run_dirs(cfg: ExperimentConfig, start_dir: Path) -> list[Path]:
    """``compare.runs`` as absolute directories (relative ones against ``start_dir``)."""
    return [(start_dir / run).resolve() for run in cfg.compare.runs]


def is_run_of(path: Path, name: str) -> bool:
    """Whether ``path`` is a run directory of benchmark ``name`` (its ``summary.json`` says so).

    Never raises: an unreadable directory is not one.
    """
    try:
        with (path / "summary.json").open("rb") as handle:
            head = handle.read(SUMMARY_PEEK_BYTES)
    except OSError:
        return False
    return f'"benchmark": "{name}"'.encode() in head


def claims_run_dirs(cfg: ExperimentConfig, start_dir: Path, name: str) -> bool:
    """Whether every ``compare.runs`` entry is a run directory of benchmark ``name``."""
    dirs = compare_run_dirs(cfg, start_dir)
    return bool(dirs) and all(is_run_of(path, name) for path in dirs)


def plugin_mlflow_run(
    cfg: ExperimentConfig, start_dir: Path, output_dir: Path, *, run_name: str,
    tags: dict[str, str], parent_run_id: str | None,
) -> tuple[Any, str | None]:
    """A plug-in job's MLflow run, or nothing with ``tracking=none``.

    Args:
        cfg: the typed config (``tracking``).
        start_dir: where a relative ``tracking.uri`` is resolved.
        output_dir: the run directory (its ``locomo_exp.log`` is uploaded).
        run_name: the run's name.
        tags: the run's tags.
        parent_run_id: a sweep's parent run, or ``None``.

    Returns:
        ``(context, tracking_uri)``: a context manager yielding the MLflow run (``None`` with
        tracking off) and the resolved store (``None`` with tracking off).
    """
    if not cfg.tracking.enabled:
        return nullcontext(), None
    from locomo_exp import tracking

    uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
    spec = tracking.RunSpec(
        tracking_uri=uri, experiment=cfg.tracking.experiment,
        run_name=run_name, tags=tags, parent_run_id=parent_run_id,
    )
    return tracking.mlflow_run(spec, log_file=output_dir / "locomo_exp.log"), uri


class FilePlugin:
    """The named part of a :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin`.

    Args:
        name: the registry key, also the ``data.format`` that names the benchmark.
        title: the benchmark's name as reports print it.
    """

    def __init__(self, name: str, title: str) -> None:
        self._name, self._title = name, title

    @property
    def name(self) -> str:
        """The registry key (``benchmark=<name>``)."""
        return self._name

    @property
    def title(self) -> str:
        """The benchmark's name as reports print it."""
        return self._title

    @property
    def formats(self) -> tuple[str, ...]:
        """``data.format=<name>``."""
        return (self._name,)

    def detects(self, path: Path) -> bool:
        """Whether ``path`` is one of this benchmark's layouts (a look at its first bytes).

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def claims(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """``data.format`` names this benchmark, or (``auto``) the one ``data.path`` is its file.

        Never raises: a file that cannot be read is not claimed (the LoCoMo job reports it).
        """
        fmt = str(cfg.data.format)
        if fmt in self.formats:
            return True
        if fmt != "auto":
            return False
        path = single_data_file(cfg, start_dir)
        try:
            return path is not None and self.detects(path)
        except (ValueError, OSError):
            return False


__all__ = [
    "FilePlugin",
    "claims_run_dirs",
    "compare_run_dirs",
    "is_run_of",
    "plugin_mlflow_run",
    "single_data_file",
]
