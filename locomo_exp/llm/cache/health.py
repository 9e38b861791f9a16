"""The judge cache checked before the first paid call, and a write failure during the run.

Paid replies live only in the cache. Before the first call, :func:`check_cache` opens the
file, writes a probe row, reads it back and compares its disk's free space with what the
run will store, so a read-only location, a corrupt or truncated file or a full disk is one
line before any money is spent; an existing file is checked the same way before the run
writes anything (:func:`existing_cache_problem`; a pipeline job keeps that connection for
its judge, :func:`open_existing_cache`, so the file is opened and probed once per job).
During the run, :func:`store_or_stop` stores each reply; the first write that fails stops
new calls at once (:class:`CacheWriteFailed`), and every reply that could not be stored is
counted in its one line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from locomo_exp.llm.cache.claims import CallClaims
from locomo_exp.llm.cache.store import JudgeCache
from locomo_exp.llm.errors import JudgeError, JudgeJobStopped
from locomo_exp.llm.messages import JudgeReply

BYTES_PER_REPLY_OVERHEAD: Final = 1024
"""Bytes of one stored reply beyond its texts: key digest, numbers, index and page slack."""

BYTES_PER_OUTPUT_TOKEN: Final = 4
"""Upper estimate of the stored bytes of one output token of a reply (UTF-8 text)."""

_PROBE_TABLE = "CREATE TABLE IF NOT EXISTS judge_probe (pid INTEGER, at REAL, note TEXT)"


def reply_bytes(texts: Sequence[str], max_tokens: int) -> int:
    """Upper estimate of the bytes one stored reply takes in the cache file.

    A row holds the key's fields as JSON (question, gold, prediction and settings) and the
    reply's text (at most ``max_tokens`` tokens), with SQLite's page and index overhead.

    Args:
        texts: the call's question, gold and prediction.
        max_tokens: the reply's output token limit.

    Returns:
        Bytes (an over-estimate: the check must never pass a disk that cannot hold them).
    """
    key_bytes = sum(len(text.encode("utf-8")) for text in texts)
    return 2 * key_bytes + BYTES_PER_OUTPUT_TOKEN * max_tokens + BYTES_PER_REPLY_OVERHEAD


def check_cache(path: Path, specs: Sequence[Any], max_tokens: int) -> None:
    """Open the cache, write and read back a probe row, and check the disk's free space.

    Args:
        path: the resolved ``judge.cache_path``.
        specs: the run's calls (each with ``key``, a
            :class:`~locomo_exp.llm.cache.store.CacheKey`, and ``digest``); those not yet
            stored are the replies the run will store.
        max_tokens: the replies' output token limit (``judge.max_tokens``).

    Raises:
        JudgeError: one line naming the path and the problem (cannot be opened or
            created, read-only, corrupt or truncated, too little free space).
    """
    open_checked_cache(path, specs, max_tokens).close()


def open_checked_cache(path: Path, specs: Sequence[Any], max_tokens: int) -> JudgeCache:
    """:func:`check_cache`'s checks, the cache left open for the run's calls.

    A judge run uses this one connection for its checks, its estimate and its calls:
    opening one (WAL mode, schema) and closing it (SQLite folds the write-ahead log into
    the file) cost about 5 and 10 ms each on the project's disk, paid once instead of
    three times (measured by the judged-run benchmark in ``benchmarks/``).

    Args:
        path: the resolved ``judge.cache_path``.
        specs: the run's calls (see :func:`check_cache`).
        max_tokens: the replies' output token limit (``judge.max_tokens``).

    Returns:
        The open :class:`~locomo_exp.llm.cache.store.JudgeCache`; the caller closes it.

    Raises:
        JudgeError: as :func:`check_cache` (the cache closed first).
    """
    cache = _open_probed(path)
    try:
        check_room(cache, specs, max_tokens)
    except BaseException:
        cache.close()
        raise
    return cache


def open_existing_cache(path: Path) -> JudgeCache | None:
    """An existing cache file opened and probed, left open; ``None`` for a missing file.

    The open, ``quick_check`` and probe row of :func:`check_cache`; a missing file is not
    created here. A job's preflight (:func:`locomo_exp.benchmarks.pipeline.preflight`)
    opens its cache once this way, before anything is written, and hands the connection to
    the judge (``run_judge(cache=...)``), which then checks only the free space
    (:func:`check_room`): one open and one probe per job.

    Args:
        path: the resolved ``judge.cache_path``
            (:func:`~locomo_exp.llm.cache.store.cache_path_problem` ran first).

    Returns:
        The open :class:`~locomo_exp.llm.cache.store.JudgeCache` (the caller closes it),
        or ``None``.

    Raises:
        JudgeError: one line naming the path and the problem (cannot be opened, locked,
            read-only, corrupt or truncated).
    """
    if not path.is_file():
        return None
    return _open_probed(path)


def check_room(cache: JudgeCache, specs: Sequence[Any], max_tokens: int) -> None:
    """The free space :func:`check_cache` checks, on an open, probed cache.

    Args:
        cache: the job's open cache.
        specs: the run's calls (see :func:`check_cache`); those not stored are counted.
        max_tokens: the replies' output token limit (``judge.max_tokens``).

    Raises:
        JudgeError: the stored replies cannot be read, or the disk has less free space
            than the new replies need (one line naming the path, in bytes as MB).
    """
    where = f"judge.cache_path={cache.path}"
    try:
        stored = cache.get_many(spec.digest for spec in specs)
    except (sqlite3.Error, OSError) as error:
        raise JudgeError(f"{where} cannot be used as the judge cache: {_reason(error)}") from None
    new = [spec.key for spec in specs if spec.digest not in stored]
    needed = sum(
        reply_bytes([k.question, k.ground_truth or "", k.prediction], max_tokens) for k in new
    )
    free = shutil.disk_usage(cache.path.parent).free
    if free < needed:
        raise JudgeError(
            f"{where}: its disk has {_mb(free)} free, and the {len(new)} replies this "
            f"run will store need up to {_mb(needed)}; free space or point "
            "judge.cache_path at another disk"
        )


def _open_probed(path: Path) -> JudgeCache:
    """The cache opened, ``quick_check``-ed and probed (closed again on any problem)."""
    where = f"judge.cache_path={path}"
    try:
        cache = JudgeCache(path)
    except JudgeError:
        raise
    except (sqlite3.Error, OSError) as error:
        raise JudgeError(f"{where} cannot be used as the judge cache: {_reason(error)}") from None
    try:
        _probe(cache, where)
    except (sqlite3.Error, OSError) as error:
        cache.close()
        raise JudgeError(f"{where} cannot be used as the judge cache: {_reason(error)}") from None
    except BaseException:
        cache.close()
        raise
    return cache


def existing_cache_problem(path: Path) -> str | None:
    """Why an existing cache file cannot be opened and written, or ``None`` when it can.

    The run's pre-write check (:func:`locomo_exp.judge.preflight.preflight_judge`): the same
    open, ``quick_check`` and probe row as :func:`check_cache`, before the run directory,
    the MLflow run or any call, so a corrupt or truncated file is one line and the run
    directory stays as it was. A missing file is not created here (the first call creates
    it); :func:`check_cache` checks it, and the free space, before the first paid call.

    Args:
        path: the resolved ``judge.cache_path`` (not a directory:
            :func:`~locomo_exp.llm.cache.store.cache_path_problem` ran first).

    Returns:
        One line naming the file and the problem, or ``None`` (also for a missing file).
    """
    try:
        cache = open_existing_cache(path)
    except JudgeError as error:
        return str(error)
    if cache is not None:
        cache.close()
    return None


def _probe(cache: JudgeCache, where: str) -> None:
    """quick_check, then one row written, read back and deleted (raises on any problem)."""
    conn = cache.connection
    check = conn.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        raise JudgeError(
            f"{where} is damaged (SQLite quick_check: {check[0] if check else '?'}); "
            "move it aside and re-run (its stored replies are not used)"
        )
    marker = f"probe {os.getpid()} {time.time()!r}"
    conn.execute(_PROBE_TABLE)
    conn.execute(
        "INSERT INTO judge_probe (pid, at, note) VALUES (?, ?, ?)",
        (os.getpid(), time.time(), marker),
    )
    back = conn.execute("SELECT note FROM judge_probe WHERE note = ?", (marker,)).fetchone()
    conn.execute("DELETE FROM judge_probe WHERE note = ?", (marker,))
    if back is None or back[0] != marker:
        raise JudgeError(f"{where}: a row written to the cache could not be read back")


def _mb(n_bytes: int) -> str:
    return f"{n_bytes / 1_000_000:.1f} MB"


def _reason(error: BaseException) -> str:
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return " ".join(str(text).split())


class CacheWriteFailed(JudgeJobStopped):
    """The cache refused a reply: no new call starts; the lost replies are counted.

    Attributes:
        path: the cache file.
        reason: the first write error, as one phrase.
        lost: paid replies that could not be stored so far.
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.lost = 1

    def __str__(self) -> str:
        replies = "reply" if self.lost == 1 else "replies"
        return (
            f"the judge cache {self.path} cannot store replies ({self.reason}): {self.lost} "
            f"paid {replies} could not be stored and no new call was started; free space or "
            "fix judge.cache_path, then re-run the same command to resume"
        )


def store_or_stop(
    claims: CallClaims | None,
    cache: JudgeCache | None,
    spec: Any,
    reply: JudgeReply,
    stopped: JudgeJobStopped | None,
) -> JudgeJobStopped | None:
    """Store one reply; on a write failure return the error that stops new calls.

    Args:
        claims: the pool's claims (store and release in one transaction), or ``None``.
        cache: the cache, when there are no claims.
        spec: the call (its ``key``, ``digest`` and ``question_id``).
        reply: the API's reply.
        stopped: the pool's current reason to stop, if any.

    Returns:
        ``stopped`` unchanged when the reply was stored; else a :class:`CacheWriteFailed`
        (the same one, with one more lost reply, after the first failure).
    """
    try:
        if claims is not None:
            claims.complete(spec.key, reply, question_id=spec.question_id, digest=spec.digest)
        elif cache is not None:
            cache.put(spec.key, reply, question_id=spec.question_id)
        return stopped
    except (sqlite3.Error, OSError) as error:
        if claims is not None:
            with contextlib.suppress(sqlite3.Error, OSError):
                claims.release(spec.digest)  # leave no claim behind when the disk allows
        if isinstance(stopped, CacheWriteFailed):
            stopped.lost += 1
            return stopped
        path = cache.path if cache is not None else Path("?")
        if claims is not None:
            path = claims.cache.path
        return CacheWriteFailed(path, _reason(error))


__all__ = [
    "CacheWriteFailed",
    "check_cache",
    "check_room",
    "existing_cache_problem",
    "open_checked_cache",
    "open_existing_cache",
    "reply_bytes",
    "store_or_stop",
]
