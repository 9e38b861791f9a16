"""What a benchmark package gives the command line: the plug-in protocol and its run's result."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.results.run_log import RunLog


@dataclass(frozen=True)
class PluginRun:
    """A finished benchmark job, as the command line prints it.

    Attributes:
        console: the text to print on standard output (figures, where the outputs are,
            the MLflow run); already worded, one string.
        output_dir: the run directory the job wrote.
        exit_status: 0 for a run that finished as asked; 1 for one whose outputs were
            written but that failed a gate the user set (the console says which).
        body: a comparison's result, the object its ``compare.json`` holds (``mode=compare``:
            the comparison's MLflow metrics are computed from it, never from the file read
            back); ``None`` for a job.
    """

    console: str
    output_dir: Path
    exit_status: int = 0
    body: Mapping[str, Any] | None = None


@runtime_checkable
class BenchmarkPlugin(Protocol):
    """One benchmark's job, as registered in :data:`locomo_exp.benchmarks.registry.PLUGINS`.

    A plug-in raises :class:`ValueError` (``DataValidationError`` included) or
    :class:`OSError` for a user's mistake, with one line naming the file, the record and the
    field; the command line prints it as ``error: ...`` and exits 1. Nothing may be written,
    deleted or paid before every such check has passed.
    """

    @property
    def name(self) -> str:
        """The registry key (the package's name), as in ``benchmark=<name>``."""
        ...

    @property
    def title(self) -> str:
        """The benchmark's name as reports print it (its authors' spelling)."""
        ...

    @property
    def formats(self) -> tuple[str, ...]:
        """The ``data.format`` values that name this benchmark explicitly."""
        ...

    def claims(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether the job's input is this benchmark's.

        True when ``data.format`` is one of :attr:`formats`; with ``data.format=auto``, when
        the single ``data.path`` is one of this benchmark's layouts. Cheap (a peek at the
        file's first bytes before any parse) and never raises: a file that cannot be read
        is not claimed, and the LoCoMo job reports it in its own words.

        Args:
            cfg: the typed config.
            start_dir: the directory relative paths are resolved against.
        """
        ...

    def run(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
            long_lived: bool = False) -> PluginRun:
        """Run the job: check, read, score, write the outputs, track.

        Args:
            cfg: the typed config.
            output_dir: Hydra's run directory.
            start_dir: the directory relative paths are resolved against.
            long_lived: the process runs this one job (``python -m locomo_exp``): the job
                may freeze its heap for the garbage collector (in-process callers: false).

        Returns:
            What the command line prints and the exit status.

        Raises:
            ValueError: bad input or settings (one line; nothing written yet).
            OSError: an unreadable input or an unwritable output directory.
            KeyboardInterrupt: Ctrl-C or SIGTERM during the job.
        """
        ...


@runtime_checkable
class ComparePlugin(Protocol):
    """The optional ``mode=compare`` hook of a benchmark plug-in.

    A plug-in that also has these two methods compares its own runs; the command line asks
    each registered plug-in, in order, whether it claims the compared run directories
    (:func:`locomo_exp.benchmarks.registry.compare_plugin_for`); runs no plug-in claims are
    compared by LoCoMo, the last (any runs no earlier benchmark claims).
    """

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every directory of ``compare.runs`` is one of this benchmark's runs.

        Cheap and never raises: a directory that cannot be read is not claimed.
        """
        ...

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare the runs of ``compare.runs``; write the outputs in ``output_dir``.

        Returns:
            The console and, as ``body``, what ``compare.json`` holds (the comparison's
            MLflow metrics are computed from it; without it only the flips are logged).

        Raises:
            ValueError: runs that cannot be compared (one line naming the run and why).
            OSError: an unreadable run or an unwritable output directory.
        """
        ...


@dataclass(frozen=True)
class SweepJobRun:
    """A benchmark job that ran inside a sweep, as the sweep's job record needs it.

    Attributes:
        run_id: the job's MLflow run (a child of the sweep's parent run), or ``None``.
        report_path: the job's ``report.md``.
    """

    run_id: str | None
    report_path: Path


@runtime_checkable
class RunLogPlugin(Protocol):
    """The hook that reads a plug-in's ``summary.json`` as the typed run log (docs/run_log.md).

    A run written since ``schema_version`` 2 holds its log (``run_log``); one written
    before (version 1) is read by building the log from the benchmark's own sections, as
    its job builds it. :func:`locomo_exp.benchmarks.registry.run_log_of` asks the plug-in
    whose ``name`` the summary's ``benchmark`` is.
    """

    @property
    def name(self) -> str:
        """The registry name (a summary's ``benchmark``)."""
        ...

    def run_log(self, summary: Mapping[str, Any]) -> RunLog:
        """The run log built from the summary's own sections.

        Raises:
            KeyError: a section the benchmark's summaries always have is missing.
        """
        ...


Spending = Callable[[dict[str, Any]], tuple[str, list[str], str]]
"""A sweep row's status, token and cost cells, as a LoCoMo sweep shows them."""


@runtime_checkable
class SweepPlugin(Protocol):
    """The optional sweep hooks of a benchmark plug-in (``python -m locomo_exp -m ...``).

    The sweep asks the registry which plug-in claims a job
    (:func:`locomo_exp.benchmarks.registry.plugin_for`); a plug-in without these hooks is
    refused in a sweep in one line before any job starts. The sweep keeps what every
    benchmark shares (job records, MLflow parent, baseline choice, spend cells); these
    hooks give the benchmark's own checks, job, row figures, pairing and table.
    """

    def sweep_problems(self, cfg: ExperimentConfig, start_dir: Path) -> list[str]:
        """The job's settings that would fail it, checked before any job starts."""
        ...

    def sweep_judge_config(self, judge: JudgeConfig) -> JudgeConfig:
        """The judge settings the job will run with (the sweep's judge preflight checks them)."""
        ...

    def run_in_sweep(
        self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
        run_name: str, parent_run_id: str | None, extra_tags: dict[str, str],
        swept_keys: Sequence[str] = (),
    ) -> SweepJobRun:
        """Run one sweep job, its MLflow run a child of ``parent_run_id``.

        ``swept_keys``: the keys the sweep varies (a job may log them as params).

        Raises:
            ValueError: bad input or settings (recorded as the job's failure).
            locomo_exp.llm.errors.JudgeBatchPending: batches still processing.
        """
        ...

    def sweep_scorer(self, cfg: ExperimentConfig) -> str:
        """What a swept job's MLflow run name says scored it (the benchmark, or LoCoMo's scorer)."""
        ...

    def sweep_f1_variant(self, cfg: ExperimentConfig) -> str | None:
        """The F1 variant the job's sweep row reports (``f1.variant``), or ``None``."""
        ...

    def sweep_row(self, summary: Mapping[str, Any]) -> dict[str, Any] | None:
        """A job's cells of the sweep summary row, or ``None`` when its run is not this one's."""
        ...

    def owns_sweep_rows(self, rows: list[dict[str, Any]]) -> bool:
        """Whether the sweep's rows are this benchmark's (their figures are its own)."""
        ...

    def sweep_vs_baseline(
        self, rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path
    ) -> str:
        """Compare each completed row with the completed baseline row ``base``.

        Args:
            rows: the completed rows other than ``base`` (modified: ``vs_baseline`` ...).
            base: the baseline job's row.
            sweep_dir: the sweep directory (each pair's files under ``vs_baseline/<job>/``).

        Returns:
            The method, in words, for the summary's vs-baseline line.
        """
        ...

    def sweep_table(self, summary: Mapping[str, Any], spending: Spending) -> list[str]:
        """The lines of the sweep summary's table (after its opening lines)."""
        ...
