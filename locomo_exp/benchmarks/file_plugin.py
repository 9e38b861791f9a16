"""What every plug-in that reads one results file states the same way: its names and its claim.

A plug-in subclasses :class:`FilePlugin` and gives :meth:`FilePlugin.detects` (a cheap look at
a file); the name, the title, the ``data.format`` that names it and :meth:`FilePlugin.claims`
(an explicit ``data.format`` first, then detection of the one ``data.path``) come from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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


__all__ = ["FilePlugin", "single_data_file"]
