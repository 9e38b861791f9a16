"""A run stopped by the user's mistake leaves the run directory as it found it.

Hydra creates the run directory and writes ``.hydra/`` and the job log before the job
reads its input; :func:`remove_hydra_only_run_dir_of_this_run` removes them again when
the job stops with exit status 1, and never a file it did not write.

With ``overwrite=true`` over an earlier run, Hydra's new ``.hydra/`` files would describe
a command whose input was then refused, beside the earlier run's outputs. Their earlier
content is kept in memory before Hydra writes (:func:`keep_previous_hydra_files`) and
written back when the job stops before replacing the earlier run
(:func:`restore_previous_hydra_files`); once the new input is valid and the old outputs
are removed, the new files stay (:func:`forget_previous_hydra_files`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from locomo_exp.report.run_claim import release_run_dir_claims

HYDRA_SUBDIR_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")
"""What Hydra writes into ``hydra.output_subdir`` (``.hydra/``) when a run starts."""

_previous_hydra_files: dict[Path, bytes | None] = {}


def keep_previous_hydra_files(output_dir: Path, hydra_subdir: str | None) -> None:
    """Keep the content of ``<output_dir>/<hydra_subdir>/``'s files before Hydra rewrites them.

    Args:
        output_dir: the run directory, holding an earlier run (``overwrite=true``).
        hydra_subdir: ``hydra.output_subdir`` (``.hydra``), or ``None`` when Hydra writes none.
    """
    _previous_hydra_files.clear()
    if not hydra_subdir:
        return
    for name in HYDRA_SUBDIR_FILES:
        path = Path(os.path.abspath(output_dir / hydra_subdir / name))
        try:
            _previous_hydra_files[path] = path.read_bytes()
        except FileNotFoundError:
            _previous_hydra_files[path] = None  # the earlier run had none: removed on restore
        except OSError:  # unreadable: left to whatever Hydra writes
            continue


def forget_previous_hydra_files() -> None:
    """The earlier run is being replaced: Hydra's new ``.hydra/`` files describe the run."""
    _previous_hydra_files.clear()


def restore_previous_hydra_files() -> list[Path]:
    """Write back the ``.hydra/`` files kept by :func:`keep_previous_hydra_files`, if any.

    Called when the job stops (an error, Ctrl-C) before it replaced the earlier run: the
    directory then again describes that run only. A file the earlier run did not have is
    removed. Nothing happens after :func:`forget_previous_hydra_files`.

    Returns:
        The files written back or removed.
    """
    restored = []
    for path, content in _previous_hydra_files.items():
        try:
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(content)
        except OSError:  # pragma: no cover - the directory went away meanwhile
            continue
        restored.append(path)
    _previous_hydra_files.clear()
    return restored


def remove_hydra_only_run_dir(
    output_dir: Path,
    start_dir: Path,
    *,
    hydra_subdir: str | None,
    log_file: str | None,
    overrides: list[str] | None = None,
) -> bool:
    """Remove a run directory that holds nothing but the files Hydra wrote when it started.

    Called when a run stops on the user's mistake (exit status 1) so that it leaves
    nothing behind. Only Hydra's own files are removed: ``<hydra_subdir>/config.yaml``,
    ``hydra.yaml`` and ``overrides.yaml`` and the job's log. Any other file or directory
    (the user's, an earlier run's outputs) keeps the whole directory as it is. The start
    directory and its ancestors are never removed; the run directory's parents up to the
    start directory are removed when that leaves them empty (Hydra's ``outputs/<date>/``).

    Args:
        output_dir: the run directory (``hydra.runtime.output_dir``).
        start_dir: the directory the program started in.
        hydra_subdir: ``hydra.output_subdir`` (``.hydra``), or ``None`` when Hydra writes none.
        log_file: the job log's path relative to ``output_dir``, or ``None`` for none.
        overrides: this run's command-line overrides; when given, a directory whose
            ``overrides.yaml`` holds others is kept (another run started in the same
            directory in the same second, and wrote over Hydra's files).

    Returns:
        Whether the run directory was removed.
    """
    run = Path(os.path.abspath(output_dir))
    start = Path(os.path.abspath(start_dir))
    if run == start or run in start.parents or not run.is_dir() or run.is_symlink():
        return False
    subdir = Path(hydra_subdir) if hydra_subdir else None
    own_files = {subdir / name for name in HYDRA_SUBDIR_FILES} if subdir else set()
    if log_file:
        own_files.add(Path(log_file))
    own_dirs = {subdir, *subdir.parents} - {Path(".")} if subdir else set()
    if overrides is not None and subdir is not None and not _same_overrides(
        run / subdir / "overrides.yaml", overrides
    ):
        return False
    found = [path.relative_to(run) for path in run.rglob("*")]
    for rel in found:
        path = run / rel
        if path.is_symlink() or (rel not in own_files if path.is_file() else rel not in own_dirs):
            return False
    try:
        for rel in sorted(found, key=lambda p: len(p.parts), reverse=True):
            (run / rel).unlink() if (run / rel).is_file() else (run / rel).rmdir()
        run.rmdir()
    except OSError:  # something appeared meanwhile, or no permission: keep what is left
        return False
    for parent in run.parents:
        if parent == start or start not in parent.parents:
            break
        try:
            parent.rmdir()  # only when empty
        except OSError:
            break
    return True


def _same_overrides(path: Path, overrides: list[str]) -> bool:
    """Whether Hydra's ``overrides.yaml`` at ``path`` lists exactly ``overrides``."""
    from omegaconf import OmegaConf

    try:
        written = OmegaConf.to_container(OmegaConf.load(path))
    except Exception:  # noqa: BLE001 - missing or unreadable: not provably this run's
        return False
    return isinstance(written, list) and [str(o) for o in written] == overrides


def remove_hydra_only_run_dir_of_this_run() -> bool:
    """:func:`remove_hydra_only_run_dir` for the current single Hydra run (never a sweep).

    This run's claim on the directory is released first.

    The start directory is Hydra's ``runtime.cwd``; the log file is the job logging's file
    handler's, when it writes into the run directory.

    Returns:
        Whether the run directory was removed.
    """
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized() or HydraConfig.get().mode == RunMode.MULTIRUN:
        return False
    release_run_dir_claims()
    hydra_cfg = HydraConfig.get()
    output_dir = Path(hydra_cfg.runtime.output_dir)
    handlers = (hydra_cfg.job_logging or {}).get("handlers") or {}
    log_path = (handlers.get("file") or {}).get("filename")
    log_file = None
    if log_path:
        try:
            log_file = str(Path(os.path.abspath(str(log_path))).relative_to(output_dir))
        except ValueError:  # the log is written elsewhere
            log_file = None
    subdir = str(hydra_cfg.output_subdir) if hydra_cfg.output_subdir else None
    start_dir = Path(hydra_cfg.runtime.cwd)
    return remove_hydra_only_run_dir(
        output_dir,
        start_dir,
        hydra_subdir=subdir,
        log_file=log_file,
        overrides=_typed_overrides(hydra_cfg.overrides.task),
    )


def _typed_overrides(task: Any) -> list[str]:
    """The overrides as typed: ``${oc.env:UNSET}`` in one is not resolved (nor raises)."""
    from omegaconf import OmegaConf

    listed = OmegaConf.to_container(task, resolve=False) if OmegaConf.is_config(task) else task
    return [str(o) for o in listed] if isinstance(listed, list) else []


__all__ = [
    "HYDRA_SUBDIR_FILES",
    "forget_previous_hydra_files",
    "keep_previous_hydra_files",
    "restore_previous_hydra_files",
    "remove_hydra_only_run_dir",
    "remove_hydra_only_run_dir_of_this_run",
]
