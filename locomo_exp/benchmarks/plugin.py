"""What a benchmark package gives the command line: the plug-in protocol and its run's result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig


@dataclass(frozen=True)
class PluginRun:
    """A finished benchmark job, as the command line prints it.

    Attributes:
        console: the text to print on standard output (figures, where the outputs are,
            the MLflow run); already worded, one string.
        output_dir: the run directory the job wrote.
        exit_status: 0 for a run that finished as asked; 1 for one whose outputs were
            written but that failed a gate the user set (the console says which).
    """

    console: str
    output_dir: Path
    exit_status: int = 0


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
        """The registry key (``beam``), as in ``benchmark=<name>``."""
        ...

    @property
    def title(self) -> str:
        """The benchmark's name as reports print it (``BEAM``)."""
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

    def run(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Run the job: check, read, score, write the outputs, track.

        Args:
            cfg: the typed config.
            output_dir: Hydra's run directory.
            start_dir: the directory relative paths are resolved against.

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
    (:func:`locomo_exp.benchmarks.registry.compare_plugin_for`) before the LoCoMo and
    LongMemEval comparisons.
    """

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every directory of ``compare.runs`` is one of this benchmark's runs.

        Cheap and never raises: a directory that cannot be read is not claimed.
        """
        ...

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare the runs of ``compare.runs``; write the outputs in ``output_dir``.

        Raises:
            ValueError: runs that cannot be compared (one line naming the run and why).
            OSError: an unreadable run or an unwritable output directory.
        """
        ...
