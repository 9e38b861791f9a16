"""Output files: atomic writes, and the run directory's ownership check.

Every file the tool writes (``report.md``, ``scores.jsonl``, ``summary.json``,
``config.yaml``, plots, sweep summaries) is written to a temporary name in the same
directory and moved into place with :func:`os.replace` (atomic on POSIX and Windows within
one file system). A full disk or a crash mid-write therefore leaves either the previous
complete file or no file, never a truncated one that looks complete, and no temporary
litter.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

TEMP_PREFIX = ".tmp-"
"""Temporary files start with this prefix (hidden) in the target's directory."""

RUN_MARKERS = ("report.md", "summary.json", "scores.jsonl")
"""A directory holding any of these already holds a run's outputs."""

TOOL_FILES = (
    "report.md",
    "scores.jsonl",
    "summary.json",
    "config.yaml",
    "card.json",
    "category_scores.png",
    "j_distribution.png",
    "sweep_job.json",
)
"""Every file a job writes into its output directory (cleared by ``overwrite=true``)."""


def _default_mode() -> int:
    """``0o666`` minus the process umask: the mode ``open()`` would have given a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _default_mode()


class OutputDirNotWritable(ValueError):
    """The output directory cannot be created or written (read-only, no permission ...)."""


class OutputDirInUse(ValueError):
    """The output directory already holds a run's outputs and ``overwrite`` is false."""


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``; moved onto ``path`` when the block succeeds.

    The temporary name keeps ``path``'s suffix (so e.g. matplotlib infers the format).
    When the block raises, the temporary file is removed and ``path`` is left as it was.

    Args:
        path: the final file.

    Yields:
        The temporary path to write to.

    Raises:
        OSError: when the directory is not writable or the move fails.
    """
    path = Path(path)
    handle, name = tempfile.mkstemp(
        prefix=f"{TEMP_PREFIX}{path.name}.", suffix=path.suffix, dir=path.parent
    )
    os.close(handle)
    temporary = Path(name)
    with contextlib.suppress(OSError):
        os.chmod(temporary, _FILE_MODE)  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return ``path``.

    Raises:
        OSError: when writing fails (``path`` then keeps its old content, if any).
    """
    with atomic_path(path) as temporary:
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    return Path(path)


def atomic_write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write one JSON object per line to ``path`` atomically; return ``path``.

    Raises:
        OSError: when writing fails (``path`` then keeps its old content, if any).
    """
    with atomic_path(path) as temporary:
        with temporary.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
    return Path(path)


def prepare_output_dir(output_dir: Path, overwrite: bool) -> list[Path]:
    """Refuse a directory that already holds a run, or clear that run's files.

    Hydra writes ``.hydra/`` and ``<job>.log`` into the run directory before the job starts,
    so only :data:`RUN_MARKERS` count as "already used". With ``overwrite`` only the files
    in :data:`TOOL_FILES` (and temporary leftovers) are removed; nothing else is touched.

    Args:
        output_dir: the job's output directory (created if missing).
        overwrite: ``overwrite=true`` on the command line.

    Returns:
        The files removed.

    Raises:
        OutputDirInUse: the directory holds a run and ``overwrite`` is false.
        OSError: the directory cannot be created.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    found = [name for name in RUN_MARKERS if (output_dir / name).exists()]
    if not found:
        return []
    if not overwrite:
        raise OutputDirInUse(
            f"{output_dir} already holds a run ({', '.join(found)}); choose another "
            "hydra.run.dir, or pass overwrite=true to replace that run's outputs"
        )
    removed = []
    for path in [output_dir / name for name in TOOL_FILES] + list(
        output_dir.glob(f"{TEMP_PREFIX}*")
    ):
        if path.is_file():
            path.unlink()
            removed.append(path)
    log.info("overwrite=true: removed %d old output file(s) from %s", len(removed), output_dir)
    return removed


def check_writable(output_dir: Path) -> None:
    """Fail early, with one clear line, when ``output_dir`` cannot hold outputs.

    Raises:
        OutputDirNotWritable: with a message naming the directory and the reason
            (e.g. ``Read-only file system``, ``Permission denied``).
    """
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(prefix=TEMP_PREFIX, dir=output_dir):
            pass
    except OSError as error:
        reason = error.strerror or str(error)
        raise OutputDirNotWritable(f"cannot write outputs to {output_dir}: {reason}") from None


def _clear_hydra_leftovers(output_dir: Path, job_name: str) -> None:
    """With ``overwrite=true``: the old run's Hydra log and ``.hydra/`` files go too."""
    for path in [output_dir / f"{job_name}.log"] + [
        output_dir / ".hydra" / name for name in ("config.yaml", "hydra.yaml", "overrides.yaml")
    ]:
        if path.is_file():
            path.unlink()


def check_run_dir(config: Any) -> Path:
    """Checks of a single run's directory before Hydra writes into it.

    Resolves ``hydra.run.dir`` once (its ``${now:}`` would otherwise be evaluated again)
    and pins it in ``config``; checks it can be written; refuses a directory that holds
    a run unless ``overwrite=true``, and with ``overwrite`` removes that run's files
    (:func:`prepare_output_dir`) and its Hydra log and ``.hydra/`` files, which Hydra then
    writes afresh.

    Args:
        config: the composed config including its ``hydra`` node.

    Returns:
        The run directory (absolute).

    Raises:
        OutputDirNotWritable: the directory cannot be created or written.
        OutputDirInUse: the directory holds a run and ``overwrite`` is false.
    """
    from omegaconf import OmegaConf, read_write

    output_dir = Path(os.path.abspath(str(config.hydra.run.dir)))
    with read_write(config.hydra.run):
        config.hydra.run.dir = str(output_dir)
    check_writable(output_dir)
    overwrite = bool(OmegaConf.select(config, "overwrite", default=False))
    if prepare_output_dir(output_dir, overwrite) or overwrite:
        _clear_hydra_leftovers(
            output_dir, str(OmegaConf.select(config, "hydra.job.name", default=""))
        )
    return output_dir


try:  # the callback class needs Hydra; everything above works without it
    from hydra.experimental.callback import Callback as _Callback
except ImportError:  # pragma: no cover
    _Callback = object  # type: ignore[misc,assignment]


class RunDirCallback(_Callback):
    """Hydra callback (``hydra.callbacks.run_dir`` in ``conf/config.yaml``): :func:`check_run_dir`.

    Runs in ``on_run_start``, before Hydra creates the run directory and writes ``.hydra/``
    and the log, so a refused run leaves the earlier run's files untouched. A problem is
    one ``error:`` line on stderr and exit status 1.
    """

    def on_run_start(self, config: Any, **kwargs: Any) -> None:
        """Refuse a used run directory (or clear it with ``overwrite=true``) before Hydra."""
        import sys

        try:
            check_run_dir(config)
        except (OutputDirNotWritable, OutputDirInUse) as error:
            sys.stderr.write(f"error: {error}\n")
            raise SystemExit(1) from None


__all__ = [
    "RunDirCallback",
    "check_run_dir",
    "OutputDirInUse",
    "OutputDirNotWritable",
    "RUN_MARKERS",
    "TOOL_FILES",
    "atomic_path",
    "atomic_write_jsonl",
    "atomic_write_text",
    "check_writable",
    "prepare_output_dir",
]
