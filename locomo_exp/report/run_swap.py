"""``overwrite=true`` builds the new run beside the old one and swaps it in at the end.

A run that replaces an earlier one in the same directory writes every output into
:data:`STAGE_DIR` inside the run directory; the earlier run's files stay where they are
until the new run has finished and every output is written. Only then are they swapped
(:meth:`RunReplacement.commit`): the earlier run's :data:`~locomo_exp.report.run_dir.TOOL_FILES`
are moved into :data:`OLD_DIR`, a marker says all of them were, the new files are moved up
and both folders are removed. Every move is an :func:`os.replace` within one directory
tree (one file system), so a full disk cannot stop it half way; an exception or Ctrl-C in
the middle finishes or undoes the swap at once, and a swap cut by ``kill -9`` is finished
or undone by the next job in that directory (:func:`recover_cut_swap`).

A job that stops before the swap (Ctrl-C at any point, a full disk, a refused spend cap, a
judge error, a pending batch, a crash) removes :data:`STAGE_DIR` and says in one log line
that the earlier run was kept (:data:`KEPT_LINE`); judge calls already made are in the
judge cache, so running the command again pays for none of them.

A comparison (``mode=compare``) and a sweep's own files (its summary, context and
comparisons with the baseline job) are replaced the same way, with their own list of
files (``files``) and their own word in the log lines (``noun``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from locomo_exp.report.run_cleanup import forget_previous_hydra_files
from locomo_exp.report.run_dir import TOOL_FILES

log = logging.getLogger(__name__)

STAGE_DIR = ".locomo_exp-new"
"""Where a run that replaces an earlier one writes its outputs until it has finished."""

OLD_DIR = ".locomo_exp-old"
"""Where the earlier run's files are moved during the swap (removed at its end)."""

MOVED_MARKER = ".all-moved"
"""Created in :data:`OLD_DIR` once every earlier file is there: from then on the swap goes on."""

KEPT_LINE = (
    "overwrite=true: the new {noun} stopped before it finished ({reason}); the earlier {noun} "
    "in {output_dir} is kept as it was"
)
"""The one line a replacing job that stopped logs (``noun``: ``run``, ``comparison`` or
``sweep``; ``reason``: the error, or ``interrupted``)."""


def _move_up(stage: Path, output_dir: Path) -> None:
    """Move every file in ``stage`` into ``output_dir``, then remove ``stage``."""
    for path in sorted(stage.iterdir()):
        os.replace(path, output_dir / path.name)
    stage.rmdir()


def _finish_swap(output_dir: Path) -> bool:
    """Finish a swap whose earlier files were all moved aside, or undo one that had not.

    Returns:
        Whether the new run is now in place (finished) rather than the earlier one (undone).
    """
    old, stage = output_dir / OLD_DIR, output_dir / STAGE_DIR
    forward = (old / MOVED_MARKER).exists()
    if forward:
        if stage.is_dir():
            _move_up(stage, output_dir)
    else:  # only earlier files were moved so far: put them back
        for path in sorted(old.iterdir()):
            os.replace(path, output_dir / path.name)
        shutil.rmtree(stage, ignore_errors=True)
    shutil.rmtree(old)
    return forward


def recover_cut_swap(output_dir: Path) -> bool:
    """Finish or undo a swap cut by a killed job; remove a stage left by one.

    Called by a job holding the run directory's claim, before it reads the directory's
    state. Without :data:`OLD_DIR` no swap had started: a leftover :data:`STAGE_DIR` is an
    unfinished new run and is removed (the earlier run is in place).

    Args:
        output_dir: the run directory.

    Returns:
        Whether anything was left to recover.
    """
    old, stage = output_dir / OLD_DIR, output_dir / STAGE_DIR
    if old.is_dir():
        _finish_swap(output_dir)
        log.info("%s: finished a swap of runs cut short by a killed job", output_dir)
        return True
    if stage.is_dir():
        shutil.rmtree(stage, ignore_errors=True)
        return True
    return False


class RunReplacement:
    """Where a run writes its outputs, and the swap when it replaces an earlier run.

    Args:
        output_dir: the run directory.
        active: whether an earlier run is being replaced (``overwrite=true`` over a
            directory that holds one); otherwise :attr:`write_dir` is ``output_dir`` and
            :meth:`commit` does nothing.
        files: the names of the earlier run's outputs (files or folders) that the new
            run replaces; everything else in ``output_dir`` stays.
        noun: what is replaced, in the log lines (``run``, ``comparison``, ``sweep``).

    Raises:
        OSError: the stage cannot be created (a full disk, no permission).
    """

    def __init__(
        self, output_dir: Path, active: bool, *, files: Iterable[str] = TOOL_FILES,
        noun: str = "run",
    ) -> None:
        self.output_dir = output_dir
        self.active = active
        self.files = tuple(files)
        self.noun = noun
        self.committed = False
        self.write_dir = output_dir / STAGE_DIR if active else output_dir
        if active:
            recover_cut_swap(output_dir)
            self.write_dir.mkdir()

    def final_path(self, path: Path) -> Path:
        """Where ``path`` (written into :attr:`write_dir`) is once the run is swapped in."""
        return self.output_dir / path.name if self.active else path

    def commit(self) -> None:
        """Swap the new run in: the earlier run's files go, the new ones take their place.

        Call only when the new run has finished and every output is in :attr:`write_dir`.
        An exception or interrupt during the swap finishes it (when every earlier file was
        already moved aside) or undoes it, then propagates.

        Raises:
            OSError: a move failed; the earlier run is then back in place.
        """
        if not self.active or self.committed:
            return
        old = self.output_dir / OLD_DIR
        try:
            old.mkdir()
            for name in self.files:
                if os.path.lexists(self.output_dir / name):
                    os.replace(self.output_dir / name, old / name)
            (old / MOVED_MARKER).touch()
            _move_up(self.write_dir, self.output_dir)
            shutil.rmtree(old)
        except BaseException:
            if old.is_dir() and _finish_swap(self.output_dir):
                self.committed = True  # the new run is in place: nothing to say was kept
                forget_previous_hydra_files()
            raise
        self.committed = True
        forget_previous_hydra_files()  # Hydra's new .hydra/ files now describe the run
        log.info(
            "overwrite=true: the new %s replaced the earlier one in %s", self.noun, self.output_dir
        )

    def abandon(self, reason: str) -> None:
        """Remove the unfinished new run and log :data:`KEPT_LINE` (nothing when inactive)."""
        if not self.active or self.committed:
            return
        shutil.rmtree(self.write_dir, ignore_errors=True)
        log.warning(KEPT_LINE.format(noun=self.noun, reason=reason, output_dir=self.output_dir))


def stop_reason(error: BaseException) -> str:
    """A few words for :data:`KEPT_LINE`.

    Args:
        error: what stopped the job.

    Returns:
        ``interrupted`` for Ctrl-C or SIGTERM, else the error's first line (200 characters).
    """
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:200]


@contextlib.contextmanager
def replacing_run(
    output_dir: Path, active: bool, *, files: Iterable[str] = TOOL_FILES, noun: str = "run"
) -> Iterator[RunReplacement]:
    """A :class:`RunReplacement` whose unfinished new run is removed however the block ends.

    Args:
        output_dir: the run directory.
        active: whether an earlier run is being replaced.
        files: the earlier run's outputs that are replaced (:class:`RunReplacement`).
        noun: what is replaced, in the log lines.

    Yields:
        The replacement; the block calls :meth:`RunReplacement.commit` when it finished.
    """
    replacement = RunReplacement(output_dir, active, files=files, noun=noun)
    try:
        yield replacement
    except BaseException as error:
        replacement.abandon(stop_reason(error))
        raise
    replacement.abandon("it ended without its outputs")  # no commit: nothing replaced


__all__ = [
    "KEPT_LINE",
    "OLD_DIR",
    "STAGE_DIR",
    "RunReplacement",
    "recover_cut_swap",
    "replacing_run",
    "stop_reason",
]
