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

from locomo_exp.report.run_claim import RunDirClaimed, claim_run_dir, release_run_dir_claims
from locomo_exp.report.run_cleanup import (
    forget_previous_hydra_files,
    keep_previous_hydra_files,
    remove_hydra_only_run_dir,
    remove_hydra_only_run_dir_of_this_run,
    restore_previous_hydra_files,
)
from locomo_exp.results import part_finished

log = logging.getLogger(__name__)

TEMP_PREFIX = ".tmp-"
"""Temporary files start with this prefix (hidden) in the target's directory."""

RUN_MARKERS = ("report.md", "summary.json", "scores.jsonl")
"""A directory holding any of these already holds a run's outputs."""
COMPARE_MARKERS = ("compare.md", "compare.json")  # or a comparison's (mode=compare)

TOOL_FILES = (
    "report.md",
    "report.html", "questions.html",
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


def run_dir_state(output_dir: Path) -> str:
    """Whether ``output_dir`` holds no run, a finished run, or one that did not finish.

    A run is INCOMPLETE when its ``summary.json`` has a part whose status is not ``ok`` or
    ``warning: ...`` (:func:`~locomo_exp.results.part_finished`) (interrupted, failed, pending
    batch, still "running" after a crash), or when it has outputs but no ``summary.json`` or
    ``report.md`` (a comparison: ``compare.md``, written last) yet. An unreadable
    ``summary.json`` counts as finished: nothing is replaced without ``overwrite=true``.

    Args:
        output_dir: a run directory.

    Returns:
        ``"empty"``, ``"incomplete"`` or ``"finished"``.
    """
    if not any((output_dir / name).exists() for name in RUN_MARKERS + COMPARE_MARKERS):
        return "empty"
    summary_path = output_dir / "summary.json"
    if not summary_path.exists():
        done = (output_dir / "report.md").exists() or (output_dir / "compare.md").exists()
        return "finished" if done else "incomplete"
    try:
        status = json.loads(summary_path.read_text(encoding="utf-8")).get("status") or {}
    except (OSError, ValueError, AttributeError):
        return "finished"
    if not isinstance(status, dict):
        return "finished"
    finished = all(isinstance(v, str) and part_finished(v) for v in status.values())
    return "finished" if finished else "incomplete"


def check_output_dir(output_dir: Path, overwrite: bool) -> str:
    """Refuse a directory that holds a finished run unless ``overwrite``; remove nothing.

    Hydra writes ``.hydra/`` and ``<job>.log`` into the run directory before the job starts,
    so only :data:`RUN_MARKERS` and :data:`COMPARE_MARKERS` count as "already used". A run
    (or comparison) that did not finish (:func:`run_dir_state`) is resumed by the same
    command: its judge calls are cached.

    Args:
        output_dir: the job's output directory.
        overwrite: ``overwrite=true`` on the command line.

    Returns:
        The directory's :func:`run_dir_state`.

    Raises:
        OutputDirInUse: the directory holds a finished run and ``overwrite`` is false.
    """
    state = run_dir_state(output_dir)
    if state == "finished" and not overwrite:
        found = [n for n in RUN_MARKERS + COMPARE_MARKERS if (output_dir / n).exists()]
        raise OutputDirInUse(
            f"{output_dir} already holds a run ({', '.join(found)}); choose another "
            "hydra.run.dir, or pass overwrite=true to replace that run's outputs"
        )
    if state == "incomplete" and not overwrite:
        log.info("%s holds a run that did not finish: resuming it", output_dir)
    return state


def clear_output_dir(output_dir: Path) -> list[Path]:
    """Remove the files in :data:`TOOL_FILES` (and temporary leftovers); nothing else.

    Called only after the new run's input was read and validated, so a mistake never
    leaves the directory empty. From here on Hydra's new ``.hydra/`` files stay
    (:func:`~locomo_exp.report.run_cleanup.forget_previous_hydra_files`).

    Returns:
        The files removed.
    """
    forget_previous_hydra_files()
    removed = []
    for path in [output_dir / name for name in TOOL_FILES] + list(
        output_dir.glob(f"{TEMP_PREFIX}*")
    ):
        if path.is_file():
            path.unlink()
            removed.append(path)
    log.info("overwrite=true: removed %d old output file(s) from %s", len(removed), output_dir)
    return removed


def prepare_output_dir(output_dir: Path, overwrite: bool) -> list[Path]:
    """:func:`check_output_dir`, then with ``overwrite`` :func:`clear_output_dir`.

    Args:
        output_dir: the job's output directory (created if missing).
        overwrite: ``overwrite=true`` on the command line.

    Returns:
        The files removed.

    Raises:
        OutputDirInUse: the directory holds a finished run and ``overwrite`` is false.
        OSError: the directory cannot be created.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    state = check_output_dir(output_dir, overwrite)
    return clear_output_dir(output_dir) if overwrite and state != "empty" else []


INPUT_KEYS: tuple[str, ...] = (
    "data.path",
    "data.runs",
    "data.errata",
    "data.reference",
    "data.categories_from",
    "judge.labels",
)
"""Config keys naming files a job reads (``compare.runs`` too, in ``mode=compare``)."""


def refuse_input_as_output(config: Any, output_dir: Path, start_dir: Path) -> None:
    """Refuse a run directory that is an input of the job, before anything is written.

    ``mode=compare`` with ``hydra.run.dir`` set to a compared run, or ``data.path`` naming
    a file the job writes in its own directory (``report.md``, ``scores.jsonl``...), would
    replace or remove that input.

    Args:
        config: the composed config.
        output_dir: the resolved run directory.
        start_dir: the directory relative paths are resolved against.

    Raises:
        OutputDirInUse: naming the key and the path.
    """
    from omegaconf import OmegaConf

    keys = list(INPUT_KEYS)
    mode = OmegaConf.select(config, "mode", default="run")
    if str(getattr(mode, "value", mode)) == "compare":  # an Enum in the typed config
        keys.append("compare.runs")
    for key in keys:
        value = OmegaConf.select(  # ${oc.env:...} errors are reported by the job itself
            config, key, default=None, throw_on_resolution_failure=False
        )
        values = list(value) if OmegaConf.is_list(value) or isinstance(value, list) else [value]
        for item in values:
            if not item or not isinstance(item, str) or item == "???":
                continue
            path = Path(os.path.abspath(start_dir / Path(item).expanduser()))
            written = path.parent == output_dir and (
                path.name in TOOL_FILES or path.name.startswith(TEMP_PREFIX)
            )
            if path == output_dir or written:
                raise OutputDirInUse(
                    f"hydra.run.dir {output_dir} is an input of this job ({key} names {path}); "
                    "its outputs would replace it: choose another hydra.run.dir"
                )


RESUME_MAY_CHANGE = (
    "overwrite",
    "judge.progress",
    "judge.max_concurrency",
    "judge.requests_per_minute",
    "judge.timeout_s",
    "judge.max_retries",
    "judge.drain_s",
    "judge.claim_timeout_s",
)
"""Overrides that change how a run goes, not what it measures: a resume may change them."""


def _measurement_overrides(overrides: Iterable[object]) -> dict[str, str]:
    """``{key: value}`` of overrides, prefixes dropped, :data:`RESUME_MAY_CHANGE` left out."""
    found: dict[str, str] = {}
    for override in overrides:
        key, _, value = str(override).partition("=")
        key = key.lstrip("+~")
        if key not in RESUME_MAY_CHANGE:
            found[key] = value
    return found


def command_difference(saved: Iterable[object], given: Iterable[object]) -> str | None:
    """What differs between an unfinished run's overrides and this command's, or ``None``.

    The order of the overrides does not count, nor :data:`RESUME_MAY_CHANGE`.

    Args:
        saved: the overrides in the run directory's ``.hydra/overrides.yaml``.
        given: this command's overrides (Hydra's ``overrides.task``).

    Returns:
        e.g. ``data.path=b.json differs (a.json in that run)``, or
        ``scorer=both was given there, not now``; more keys are counted (``and 2 more``).
    """
    old, new = _measurement_overrides(saved), _measurement_overrides(given)
    keys = [key for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)]
    if not keys:
        return None
    key = keys[0]
    if key not in new:
        first = f"{key}={old[key]} was given there, not now"
    elif key not in old:
        first = f"{key}={new[key]} is new"
    else:
        first = f"{key}={new[key]} differs ({old[key]} in that run)"
    return first + (f", and {len(keys) - 1} more" if len(keys) > 1 else "")


def _saved_overrides(output_dir: Path, hydra_subdir: str | None) -> list[object] | None:
    """The overrides in ``<output_dir>/<hydra_subdir>/overrides.yaml``, ``None`` when unreadable."""
    from omegaconf import OmegaConf

    if not hydra_subdir:
        return None
    try:
        saved = OmegaConf.to_container(OmegaConf.load(output_dir / hydra_subdir / "overrides.yaml"))
    except Exception:  # noqa: BLE001 - missing or unreadable: nothing to compare with
        return None
    return list(saved) if isinstance(saved, list) else None


def refuse_another_command(config: Any, output_dir: Path) -> None:
    """Refuse to "resume" an unfinished run with another command.

    An unfinished run (:func:`run_dir_state`) is resumed by the same command; a different
    one (another input, scorer, judge ...) would replace its partial outputs. Compared:
    the run's ``.hydra/overrides.yaml`` and this command's overrides
    (:func:`command_difference`). A run without a readable ``overrides.yaml`` is resumed.

    Args:
        config: the composed config including its ``hydra`` node.
        output_dir: the run directory, holding an unfinished run.

    Raises:
        OutputDirInUse: the commands differ; the message names the first difference.
    """
    from omegaconf import OmegaConf

    saved = _saved_overrides(
        output_dir, OmegaConf.select(config, "hydra.output_subdir", default=None)
    )
    task = OmegaConf.select(config, "hydra.overrides.task", default=None)
    given = OmegaConf.to_container(task, resolve=False) if OmegaConf.is_config(task) else []
    difference = None if saved is None else command_difference(saved, list(given or []))
    if difference:
        raise OutputDirInUse(
            f"{output_dir} holds an unfinished run of a different command ({difference}); "
            "re-run that command to resume it, or use another hydra.run.dir or overwrite=true"
        )


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


def check_run_dir(config: Any) -> Path:
    """Checks of a single run's directory before Hydra writes into it; removes nothing.

    Resolves ``hydra.run.dir`` once (its ``${now:}`` would otherwise be evaluated again)
    and pins it in ``config``; checks it can be written; refuses a directory that is an
    input of the job (:func:`refuse_input_as_output`), claims it for this job
    (:func:`~locomo_exp.report.run_claim.claim_run_dir`: a job running there refuses this
    one), and refuses one that holds a finished run
    unless ``overwrite=true`` (:func:`check_output_dir`). A run that did not finish is
    resumed by the same command, and refused to another (:func:`refuse_another_command`).
    The old outputs are removed (``overwrite=true``) only once the new input has been
    validated (:func:`locomo_exp.experiment.run_experiment`); until then the earlier
    ``.hydra/`` files are kept to be written back
    (:func:`~locomo_exp.report.run_cleanup.keep_previous_hydra_files`).

    Args:
        config: the composed config including its ``hydra`` node.

    Returns:
        The run directory (absolute).

    Raises:
        OutputDirNotWritable: the directory cannot be created or written.
        OutputDirInUse: the directory is an input, holds a finished run and
            ``overwrite`` is false, or holds an unfinished run of another command.
        RunDirClaimed: another running job holds the directory.
    """
    from omegaconf import OmegaConf, read_write

    output_dir = Path(os.path.abspath(str(config.hydra.run.dir)))
    with read_write(config.hydra.run):
        config.hydra.run.dir = str(output_dir)
    refuse_input_as_output(config, output_dir, Path.cwd())
    check_writable(output_dir)
    claim_run_dir(output_dir)  # before the state is read: a run ending meanwhile is seen
    overwrite = bool(OmegaConf.select(config, "overwrite", default=False))
    try:
        state = check_output_dir(output_dir, overwrite)
        if state == "incomplete" and not overwrite:
            refuse_another_command(config, output_dir)
    except OutputDirInUse:
        release_run_dir_claims()
        raise
    if overwrite and state != "empty":  # written back if the new input is refused
        keep_previous_hydra_files(
            output_dir, OmegaConf.select(config, "hydra.output_subdir", default=None)
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
    one ``error:`` line on stderr and exit status 1. Nothing is removed here.
    """

    def on_run_start(self, config: Any, **kwargs: Any) -> None:
        """Refuse an input or a finished run as the run directory, before Hydra writes."""
        import sys

        try:
            check_run_dir(config)
        except (OutputDirNotWritable, OutputDirInUse, RunDirClaimed) as error:
            sys.stderr.write(f"error: {error}\n")
            raise SystemExit(1) from None

    def on_run_end(self, config: Any, **kwargs: Any) -> None:
        """Release the run directory (an error or Ctrl-C releases it at exit instead)."""
        release_run_dir_claims()


__all__ = [
    "INPUT_KEYS",
    "RunDirCallback",
    "RESUME_MAY_CHANGE",
    "check_output_dir",
    "clear_output_dir",
    "command_difference",
    "refuse_another_command",
    "refuse_input_as_output",
    "run_dir_state",
    "check_run_dir",
    "remove_hydra_only_run_dir",
    "remove_hydra_only_run_dir_of_this_run",
    "restore_previous_hydra_files",
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
