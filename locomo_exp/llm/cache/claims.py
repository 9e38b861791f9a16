"""Claims on realtime calls in flight, shared by every process using one cache file.

Concurrent processes judging the *same* calls do not pay twice: before a realtime call is
sent, its key is claimed in the ``judge_claims`` table in one ``BEGIN IMMEDIATE``
transaction that also re-checks ``judge_calls``. A key already stored is used as is; a
key claimed by another live owner is not called but waited for; a claim whose owner is
gone (its pid dead on this host, or no heartbeat for ``judge.claim_timeout_s``) is taken
over. The reply is stored and the claim released in one transaction; a call that fails
releases its claim so another process (or the next run) can make it.

A pid cannot tell two owners of one process apart (two pools, or a pool that is gone):
:class:`ClaimOwners` is the registry of the owners alive in this process, an object passed
to each :class:`CallClaims` (by default the one of the current process).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

from locomo_exp.llm.cache.store import HOSTNAME, CacheKey, JudgeCache, reply_from_row
from locomo_exp.llm.messages import JudgeReply

logger = logging.getLogger(__name__)

_CHECK_SQL = (
    "SELECT 1, text, stop_reason, input_tokens, output_tokens, response_model, batch_id "
    "FROM judge_calls WHERE key = ? "
    "UNION ALL SELECT 0, owner, pid, host, heartbeat_at, NULL, NULL "
    "FROM judge_claims WHERE key = ?"
)
"""A key's stored reply (first column 1) and its claim (0), read in one statement."""


class ClaimOwners:
    """The claim owners alive in one process (owner tokens of open :class:`CallClaims`).

    A claim made by this pid whose token is not registered here was left by an owner that
    is gone, and is taken over at once. :meth:`for_process` gives the registry of the
    current process (a forked child gets its own).
    """

    _per_process: ClassVar[dict[int, ClaimOwners]] = {}
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self._owners: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def for_process(cls) -> ClaimOwners:
        """The registry shared by every owner of the current process."""
        pid = os.getpid()
        with cls._guard:
            return cls._per_process.setdefault(pid, cls())

    def register(self, owner: str) -> None:
        """Mark ``owner`` alive."""
        with self._lock:
            self._owners.add(owner)

    def retire(self, owner: str) -> None:
        """Mark ``owner`` gone (its claims, if any are left, may be taken over)."""
        with self._lock:
            self._owners.discard(owner)

    def __contains__(self, owner: object) -> bool:
        with self._lock:
            return owner in self._owners


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host and is not a zombie.

    A process killed with ``kill -9`` and not yet reaped by its parent is a zombie: it
    will never finish its call, so it counts as dead.
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: exists, owned by another user
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):  # no procfs (not Linux): trust os.kill
        return True
    return state not in (b"Z", b"X")


@dataclass(frozen=True)
class Claim:
    """The outcome of :meth:`CallClaims.acquire`.

    Attributes:
        reply: the stored reply when the call is already in the cache (use it, no call).
        acquired: ``True`` when this owner now holds the claim and must make the call.
        holder: when neither, a description of the live owner holding the claim (wait).
        took_over: when the claim was taken from a dead or silent owner, a description of it.
    """

    reply: JudgeReply | None = None
    acquired: bool = False
    holder: str | None = None
    took_over: str | None = None


class CallClaims:
    """Claims on realtime calls in flight, shared by every process using the cache file.

    One instance is one owner (pid + random token). Use it as a context manager, or call
    :meth:`close`, which releases every claim it still holds.

    Args:
        cache: the open cache (its connection is used; not thread-safe across owners:
            give each thread its own :class:`JudgeCache`).
        stale_after_s: a claim whose heartbeat is older than this is taken over even if
            its pid looks alive (another host, a hung or reused pid).
        owners: the registry of owners alive in this process (default:
            :meth:`ClaimOwners.for_process`).
    """

    def __init__(
        self, cache: JudgeCache, *, stale_after_s: float, owners: ClaimOwners | None = None
    ) -> None:
        self.cache = cache
        self._conn = cache.connection
        self.stale_after_s = float(stale_after_s)
        self.pid = os.getpid()
        self.token = uuid.uuid4().hex
        self.owner = f"{HOSTNAME}:{self.pid}:{self.token}"
        self.takeovers = 0
        self.owners = owners if owners is not None else ClaimOwners.for_process()
        self.owners.register(self.owner)

    def _holder_alive(self, owner: str, pid: int, host: str, heartbeat_at: float) -> bool:
        if owner == self.owner:
            return True  # our own call in flight (a duplicate spec of this run)
        if heartbeat_at < time.time() - self.stale_after_s:
            return False
        if host != HOSTNAME:
            return True
        if pid == self.pid:
            return owner in self.owners
        return pid_alive(pid)

    def _check(self, digest: str) -> tuple[JudgeReply | None, str | None, str | None]:
        """(stored reply, live holder, stale holder) of a key, read in the current snapshot.

        One statement reads both tables (the stored reply first, as
        :meth:`JudgeCache.get` reads it; else the claim): one per call instead of two.
        """
        rows = self._conn.execute(_CHECK_SQL, (digest, digest)).fetchall()
        stored = [row for row in rows if row[0] == 1]
        if stored:
            return reply_from_row(stored[0][1:]), None, None
        if not rows:
            return None, None, None
        owner, pid, host, heartbeat_at = rows[0][1:5]
        label = f"pid {pid} on {host}"
        if self._holder_alive(owner, int(pid), host, float(heartbeat_at)):
            return None, label, None
        return None, None, label

    def acquire(self, digest: str, *, peek: bool = False) -> Claim:
        """Claim a call before sending it (re-checking the cache first).

        Args:
            digest: the call's :meth:`CacheKey.digest`.
            peek: look without the write lock first (when polling a call likely still
                held by another owner, so polls do not queue for the lock).

        Returns:
            A :class:`Claim`: the stored reply, or ``acquired=True`` (make the call, then
            :meth:`complete` or :meth:`release`), or the live ``holder`` to wait for.
        """
        if peek:
            reply, holder, _ = self._check(digest)
            if reply is not None:
                return Claim(reply=reply)
            if holder is not None:
                return Claim(holder=holder)
        with self.cache.transaction():
            reply, holder, stale = self._check(digest)
            if reply is not None:
                return Claim(reply=reply)
            if holder is not None:
                return Claim(holder=holder)
            now = time.time()
            self._conn.execute(
                "INSERT OR REPLACE INTO judge_claims (key, owner, pid, host, claimed_at, "
                "heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)",
                (digest, self.owner, self.pid, HOSTNAME, now, now),
            )
        if stale is not None:
            self.takeovers += 1
            logger.debug("judge: took over the claim of %s from %s", digest[:12], stale)
        return Claim(acquired=True, took_over=stale)

    def complete(
        self,
        key: CacheKey,
        reply: JudgeReply,
        *,
        question_id: str | None,
        digest: str | None = None,
    ) -> None:
        """Store a call's reply and release its claim, in one transaction.

        Args:
            key: the call's key.
            reply: the API's reply.
            question_id: stored for inspection only.
            digest: ``key.digest()`` if already computed.
        """
        digest = key.digest() if digest is None else digest
        with self.cache.transaction():
            self.cache.insert_raw(digest, key.fields_json(), question_id, key.run_index, reply)
            self._conn.execute(
                "DELETE FROM judge_claims WHERE key = ? AND owner = ?", (digest, self.owner)
            )

    def release(self, digest: str) -> None:
        """Give a claim up (the call failed or was cancelled): another owner may make it."""
        self._conn.execute(
            "DELETE FROM judge_claims WHERE key = ? AND owner = ?", (digest, self.owner)
        )

    def heartbeat(self) -> None:
        """Mark every claim of this owner as alive now."""
        self._conn.execute(
            "UPDATE judge_claims SET heartbeat_at = ? WHERE owner = ?", (time.time(), self.owner)
        )

    def close(self) -> None:
        """Release every claim still held and retire the owner token."""
        try:
            self._conn.execute("DELETE FROM judge_claims WHERE owner = ?", (self.owner,))
        finally:
            self.owners.retire(self.owner)

    def __enter__(self) -> CallClaims:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.asynccontextmanager
async def held_claims(
    cache: JudgeCache,
    *,
    stale_after_s: float,
    owners: ClaimOwners | None,
    sleep: Callable[[float], Awaitable[None]],
) -> AsyncIterator[CallClaims]:
    """A claim owner for the block, its heartbeat beating on a task, closed on exit.

    Args:
        cache: the open cache.
        stale_after_s: seconds without heartbeat after which another owner's claim is
            taken over (``judge.claim_timeout_s``); the heartbeat beats every quarter of
            it (between 0.05 and 30 seconds).
        owners: registry of live claim owners (default: this process's).
        sleep: coroutine function waiting a number of seconds (the heartbeat's interval).

    Yields:
        The :class:`CallClaims`.
    """
    claims = CallClaims(cache, stale_after_s=stale_after_s, owners=owners)
    interval_s = min(30.0, max(0.05, stale_after_s / 4))

    async def beat() -> None:
        while True:
            await sleep(interval_s)
            claims.heartbeat()

    task = asyncio.ensure_future(beat())
    try:
        yield claims
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        claims.close()
        if claims.takeovers:
            logger.info(
                "judge: took over %d call(s) claimed by a process that is gone", claims.takeovers
            )
