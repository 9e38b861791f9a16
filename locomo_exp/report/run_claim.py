"""A run directory is held by one running job at a time: an exclusive claim file.

Two jobs given the same ``hydra.run.dir`` at the same time (two terminals, a script
starting runs in parallel with one ``hydra.run.dir``) would write over each other's
outputs and mix their lines in one log. A job therefore claims its run directory
before Hydra writes into it: it creates :data:`CLAIM_FILE` with ``O_CREAT | O_EXCL``
(atomic: of two jobs exactly one creates it, POSIX ``open(2)``). The other job is
refused with one line and writes nothing. The claim is removed when the job ends,
however it ends short of being killed (normal end, error, Ctrl-C: :mod:`atexit`).

A claim left by a killed job (``kill -9``, a machine that lost power) names its process
and host: on the same host a process id that no longer runs is taken over with a note
in the log; any other claim is reported with the file to remove.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as _dt
import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CLAIM_FILE = ".locomo_exp-running"
"""The claim file in a run directory while a job runs in it (hidden; removed at the end)."""

_held: set[Path] = set()
_registered = False


class RunDirClaimed(ValueError):
    """Another running job holds the run directory (its :data:`CLAIM_FILE` exists)."""


def _holder(marker: Path) -> dict[str, Any]:
    """The claim's content (``pid``, ``host``, ``started``); ``{}`` when unreadable."""
    try:
        loaded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _process_gone(pid: int) -> bool:
    """Whether no process with id ``pid`` runs on this machine (POSIX ``kill(pid, 0)``)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # PermissionError: it runs, as another user
        return False
    return False


def _left_behind(holder: dict[str, Any]) -> bool:
    """Whether a claim was left by this process or by one that no longer runs here."""
    pid = holder.get("pid")
    if not isinstance(pid, int) or holder.get("host") != socket.gethostname():
        return False
    return pid == os.getpid() or _process_gone(pid)


def claim_run_dir(output_dir: Path) -> Path:
    """Claim ``output_dir`` for this process: create :data:`CLAIM_FILE` exclusively.

    Args:
        output_dir: the run directory (created if missing).

    Returns:
        The claim file's path.

    Raises:
        RunDirClaimed: another running job holds the directory; the message names its
            process id, start time (UTC) and the claim file.
        OSError: the directory cannot be created or written.
    """
    global _registered
    output_dir.mkdir(parents=True, exist_ok=True)
    marker = output_dir / CLAIM_FILE
    content = json.dumps(
        {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
    )
    for attempt in range(2):
        try:
            handle = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _holder(marker)
            if attempt == 0 and _left_behind(holder):
                log.info("%s: taking over the claim of process %s, which has ended",
                         output_dir, holder.get("pid"))
                with contextlib.suppress(FileNotFoundError):
                    marker.unlink()
                continue
            who = (
                f"process {holder.get('pid')} on {holder.get('host')}, started "
                f"{holder.get('started')}" if holder else "another job"
            )
            raise RunDirClaimed(
                f"{output_dir} is in use by a run that has not ended ({who}); wait for it "
                f"or choose another hydra.run.dir (if no run uses it, remove {marker})"
            ) from None
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(content + "\n")
        _held.add(marker)
        if not _registered:
            atexit.register(release_run_dir_claims)
            _registered = True
        return marker
    raise RunDirClaimed(f"{output_dir}: could not claim it ({marker})")  # pragma: no cover


def release_run_dir_claims() -> list[Path]:
    """Remove the claim files this process holds (those still naming its process id).

    Returns:
        The claim files removed.
    """
    released = []
    for marker in sorted(_held):
        _held.discard(marker)
        if _holder(marker).get("pid") != os.getpid():
            continue  # taken over meanwhile: not ours any more
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()
            released.append(marker)
    return released


__all__ = ["CLAIM_FILE", "RunDirClaimed", "claim_run_dir", "release_run_dir_claims"]
