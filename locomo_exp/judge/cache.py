"""Durable cache of completed judge calls (SQLite in WAL mode).

Every completed API call is stored under a key made of model, API version, temperature,
protocol, prompt version, max_tokens, structured-output flag, question, gold answer,
prediction, category and run index, and committed at once, so a re-run, or a run
resumed after Ctrl-C or ``kill -9``, makes no call that already completed. Several
processes (e.g. parallel sweep jobs) may share one file: WAL mode lets readers and one
writer work at the same time, a busy timeout serialises writers, and ``INSERT OR IGNORE``
keeps the first reply stored for a key.

What is stored is the raw reply (text, stop reason, tokens), not the parsed score: the
parser runs on every read, so parser fixes apply to cached replies. API errors are not
stored; they are retried on the next run.

``judge.mode=batch`` keeps its ledger in the same file (:class:`BatchLedger`): every
Message Batch submitted, recorded *before* the create call is sent and given its batch id
the moment the API returns it, with one row per request (its ``custom_id`` and cache
key). A restarted process finds the batches still in flight there and polls them instead
of submitting again; batch replies land in ``judge_calls`` like realtime ones (with their
``batch_id``), so switching modes never pays twice.

Concurrent processes judging the *same* calls do not pay twice either
(:class:`CallClaims`): before a realtime call is sent, its key is claimed in the
``judge_claims`` table in one ``BEGIN IMMEDIATE`` transaction that also re-checks
``judge_calls``. A key already stored is used as is; a key claimed by another live owner
is not called but waited for; a claim whose owner is gone (its pid dead on this host, or
no heartbeat for ``judge.claim_timeout_s``) is taken over. The reply is stored and the
claim released in one transaction; a call that fails releases its claim so another
process (or the next run) can make it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from locomo_exp.judge.client import BatchItemResult, JudgeReply
from locomo_exp.judge.errors import JudgeError

logger = logging.getLogger(__name__)

CACHE_SCHEMA_VERSION = 1
"""Layout version of the cache table."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_calls (
    key TEXT PRIMARY KEY,
    key_fields TEXT NOT NULL,
    question_id TEXT,
    run_index INTEGER NOT NULL,
    text TEXT NOT NULL,
    stop_reason TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    response_model TEXT,
    created_at REAL NOT NULL,
    writer_pid INTEGER
)
"""

_BATCH_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS judge_batches (
    submission_id TEXT PRIMARY KEY,
    batch_id TEXT UNIQUE,
    status TEXT NOT NULL,
    request_count INTEGER NOT NULL,
    api_version TEXT,
    submitted_at REAL NOT NULL,
    batch_created_at REAL,
    ended_at REAL,
    counts TEXT,
    writer_pid INTEGER,
    writer_host TEXT
)
""",
    """
CREATE TABLE IF NOT EXISTS judge_batch_requests (
    submission_id TEXT NOT NULL,
    custom_id TEXT NOT NULL,
    key TEXT NOT NULL,
    key_fields TEXT NOT NULL,
    question_id TEXT,
    run_index INTEGER NOT NULL,
    result_type TEXT,
    error TEXT,
    PRIMARY KEY (submission_id, custom_id)
)
""",
    "CREATE INDEX IF NOT EXISTS judge_batch_requests_key ON judge_batch_requests (key)",
)

_CLAIM_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    heartbeat_at REAL NOT NULL
)
"""

SUBMITTING = "submitting"
"""Ledger status: the create call is (or was, before a crash) on its way."""
IN_PROGRESS = "in_progress"
"""Ledger status: the API accepted the batch; results not yet stored."""
COLLECTED = "collected"
"""Ledger status: every result line of the ended batch is stored."""
FAILED = "failed"
"""Ledger status: the create call failed; its requests are free to be submitted again."""
MISSING = "missing"
"""Ledger status: the API no longer knows the batch (404); its requests are free again."""
IN_FLIGHT_STATUSES = (SUBMITTING, IN_PROGRESS)
"""Statuses whose requests must not be submitted again."""


SQL_IN_CHUNK = 500
"""Keys per ``IN (...)`` query (SQLite limits the number of bound parameters)."""


def _in_clause_chunks(items: Iterable[str]) -> Iterator[tuple[list[str], str]]:
    """Split keys into chunks of :data:`SQL_IN_CHUNK`, each with its ``?,?,...`` placeholders."""
    values = list(items)
    for start in range(0, len(values), SQL_IN_CHUNK):
        chunk = values[start : start + SQL_IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


@dataclass(frozen=True)
class CacheKey:
    """Everything that determines a judge call's reply distribution, plus the run index.

    Attributes:
        model: model id.
        api_version: ``anthropic-version`` header sent.
        temperature: temperature sent, or ``None``.
        protocol: judge protocol name.
        prompt_version: the protocol's prompt version.
        max_tokens: output token limit.
        structured_output: whether a JSON schema was sent.
        question: question text.
        ground_truth: gold answer text (``None`` kept distinct from "None").
        prediction: predicted answer text.
        category: LoCoMo category id.
        run_index: 0-based run number.
    """

    model: str
    api_version: str
    temperature: Optional[float]
    protocol: str
    prompt_version: str
    max_tokens: int
    structured_output: bool
    question: str
    ground_truth: Optional[str]
    prediction: str
    category: int
    run_index: int

    def fields_json(self) -> str:
        """Canonical JSON of the key fields (sorted keys, no whitespace)."""
        return json.dumps(
            {
                "v": CACHE_SCHEMA_VERSION,
                "model": self.model,
                "api_version": self.api_version,
                "temperature": self.temperature,
                "protocol": self.protocol,
                "prompt_version": self.prompt_version,
                "max_tokens": self.max_tokens,
                "structured_output": self.structured_output,
                "question": self.question,
                "ground_truth": self.ground_truth,
                "prediction": self.prediction,
                "category": self.category,
                "run_index": self.run_index,
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )

    def digest(self) -> str:
        """SHA-256 hex digest of :meth:`fields_json` (the table's primary key)."""
        return hashlib.sha256(self.fields_json().encode("utf-8")).hexdigest()


def resolve_cache_path(cache_path: str, start_dir: Path) -> Path:
    """Resolve ``judge.cache_path`` against the directory the program started in.

    Args:
        cache_path: configured path (``~`` expanded); relative paths are taken from
            ``start_dir``, never from Hydra's per-run output directory, so runs share it.
        start_dir: the start directory.

    Returns:
        An absolute path.
    """
    path = Path(os.path.expanduser(cache_path))
    if not path.is_absolute():
        path = Path(start_dir) / path
    return path.resolve()


SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""


def cache_path_problem(path: Path) -> Optional[str]:
    """Why ``path`` cannot be used as the judge cache, or ``None`` when it can.

    A missing file (created on first use) and an empty file are fine; a directory, a
    file that is not an SQLite database, or a parent that is a file are not.

    Args:
        path: the resolved ``judge.cache_path``.

    Returns:
        One line naming the path and what to change, or ``None``.
    """
    if path.is_dir():
        return (
            f"judge.cache_path={path} is a directory; give a file path, "
            f"e.g. judge.cache_path={path / 'judge_cache.sqlite'}"
        )
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"judge.cache_path={path}: {parent} is a file, not a directory"
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        return f"judge.cache_path={path} cannot be read: {exc.strerror or exc}"
    if header and header != SQLITE_HEADER:
        return (
            f"judge.cache_path={path} is not a judge cache (not an SQLite database); "
            "point judge.cache_path at a new or existing cache file"
        )
    return None


class JudgeCache:
    """SQLite store of completed judge calls.

    Args:
        path: database file; parent directories are created.
        busy_timeout_s: how long a writer waits for another process's lock, seconds.

    Raises:
        JudgeError: the path is a directory or not an SQLite database
            (:func:`cache_path_problem`).
        sqlite3.Error: if the file cannot be opened as a database otherwise.
    """

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        problem = cache_path_problem(self.path)
        if problem is not None:
            raise JudgeError(problem)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(self.path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        self._enable_wal(busy_timeout_s)
        # NORMAL in WAL mode: a committed call survives a process crash (kill -9); only an
        # OS crash or power loss may lose the last commits.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)
        self._add_column("judge_calls", "batch_id", "TEXT")
        for statement in _BATCH_SCHEMA:
            self._conn.execute(statement)
        self._conn.execute(_CLAIM_SCHEMA)

    def _enable_wal(self, busy_timeout_s: float) -> None:
        # Switching a new file to WAL needs an exclusive lock, and SQLite reports "database
        # is locked" at once, without the busy handler, when another connection opens the
        # same fresh file at that moment (parallel sweep jobs): retry until the timeout.
        deadline = time.monotonic() + busy_timeout_s
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.005 + 0.02 * random.random())

    def _add_column(self, table: str, column: str, decl: str) -> None:
        columns = {row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")}
        if column in columns:
            return
        try:
            self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
        except sqlite3.OperationalError as exc:  # another process added it first
            if "duplicate column" not in str(exc).lower():
                raise

    @property
    def connection(self) -> sqlite3.Connection:
        """The SQLite connection (autocommit; shared with :class:`BatchLedger`)."""
        return self._conn

    def get(self, key: str) -> Optional[JudgeReply]:
        """The stored reply of one digest, or ``None``."""
        row = self._conn.execute(
            "SELECT text, stop_reason, input_tokens, output_tokens, response_model, batch_id "
            "FROM judge_calls WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else _reply_from_row(row)

    def get_many(self, keys: Iterable[str]) -> dict[str, JudgeReply]:
        """Look up stored replies.

        Args:
            keys: digests (:meth:`CacheKey.digest`).

        Returns:
            Digest -> stored reply, for the keys present.
        """
        found: dict[str, JudgeReply] = {}
        for chunk, marks in _in_clause_chunks(keys):
            rows = self._conn.execute(
                "SELECT key, text, stop_reason, input_tokens, output_tokens, response_model, "
                f"batch_id FROM judge_calls WHERE key IN ({marks})",
                chunk,
            ).fetchall()
            for row in rows:
                found[row[0]] = _reply_from_row(row[1:])
        return found

    def put(self, key: CacheKey, reply: JudgeReply, *, question_id: Optional[str] = None) -> None:
        """Store one completed call and commit it (first writer of a key wins).

        Args:
            key: the call's key.
            reply: the API's reply.
            question_id: stored for inspection only (not part of the key).
        """
        self.insert_raw(key.digest(), key.fields_json(), question_id, key.run_index, reply)

    def insert_raw(
        self,
        digest: str,
        key_fields: str,
        question_id: Optional[str],
        run_index: int,
        reply: JudgeReply,
    ) -> None:
        """Store one call from its stored key parts (first writer of a key wins).

        Args:
            digest: :meth:`CacheKey.digest`.
            key_fields: :meth:`CacheKey.fields_json`.
            question_id: for inspection only.
            run_index: 0-based run.
            reply: the reply; its ``batch_id`` is stored.
        """
        self._conn.execute(
            "INSERT OR IGNORE INTO judge_calls (key, key_fields, question_id, run_index, text, "
            "stop_reason, input_tokens, output_tokens, response_model, created_at, writer_pid, "
            "batch_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                digest,
                key_fields,
                question_id,
                run_index,
                reply.text,
                reply.stop_reason,
                reply.input_tokens,
                reply.output_tokens,
                reply.model,
                time.time(),
                os.getpid(),
                reply.batch_id,
            ),
        )

    def count(self) -> int:
        """Number of stored calls."""
        return int(self._conn.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reply_from_row(row: tuple) -> JudgeReply:  # type: ignore[type-arg]
    text, stop_reason, in_tok, out_tok, model, batch_id = row
    return JudgeReply(
        text=text,
        stop_reason=stop_reason,
        input_tokens=int(in_tok),
        output_tokens=int(out_tok),
        model=model or "",
        batch_id=batch_id,
    )


HOSTNAME = socket.gethostname()
"""This machine's host name, stored with each claim (pids are only checked on this host)."""

_LIVE_OWNERS: set[str] = set()
"""Claim owner tokens open in this process (a pid cannot tell two pools of one process
apart: a claim of this pid whose token is not here was left by a pool that is gone)."""


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

    reply: Optional[JudgeReply] = None
    acquired: bool = False
    holder: Optional[str] = None
    took_over: Optional[str] = None


class CallClaims:
    """Claims on realtime calls in flight, shared by every process using the cache file.

    One instance is one owner (pid + random token). Use it as a context manager, or call
    :meth:`close`, which releases every claim it still holds.

    Args:
        cache: the open cache (its connection is used; not thread-safe across owners:
            give each thread its own :class:`JudgeCache`).
        stale_after_s: a claim whose heartbeat is older than this is taken over even if
            its pid looks alive (another host, a hung or reused pid).
    """

    def __init__(self, cache: JudgeCache, *, stale_after_s: float) -> None:
        self.cache = cache
        self._conn = cache.connection
        self.stale_after_s = float(stale_after_s)
        self.pid = os.getpid()
        self.token = uuid.uuid4().hex
        self.owner = f"{HOSTNAME}:{self.pid}:{self.token}"
        self.takeovers = 0
        _LIVE_OWNERS.add(self.owner)

    def _holder_alive(self, owner: str, pid: int, host: str, heartbeat_at: float) -> bool:
        if owner == self.owner:
            return True  # our own call in flight (a duplicate spec of this run)
        if heartbeat_at < time.time() - self.stale_after_s:
            return False
        if host != HOSTNAME:
            return True
        if pid == self.pid:
            return owner in _LIVE_OWNERS
        return pid_alive(pid)

    def _check(self, digest: str) -> tuple[Optional[JudgeReply], Optional[str], Optional[str]]:
        """(stored reply, live holder, stale holder) of a key, read in the current snapshot."""
        reply = self.cache.get(digest)
        if reply is not None:
            return reply, None, None
        row = self._conn.execute(
            "SELECT owner, pid, host, heartbeat_at FROM judge_claims WHERE key = ?", (digest,)
        ).fetchone()
        if row is None:
            return None, None, None
        owner, pid, host, heartbeat_at = row
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
        with _Immediate(self._conn):
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
        question_id: Optional[str],
        digest: Optional[str] = None,
    ) -> None:
        """Store a call's reply and release its claim, in one transaction.

        Args:
            key: the call's key.
            reply: the API's reply.
            question_id: stored for inspection only.
            digest: ``key.digest()`` if already computed.
        """
        digest = key.digest() if digest is None else digest
        with _Immediate(self._conn):
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
            _LIVE_OWNERS.discard(self.owner)

    def __enter__(self) -> CallClaims:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class LedgerRequest:
    """One request of a batch submission, as the ledger stores it.

    Attributes:
        custom_id: the request's ``custom_id`` (:func:`custom_id_for`).
        digest: its cache key digest.
        key_fields: :meth:`CacheKey.fields_json`.
        question_id: the question (for inspection).
        run_index: 0-based run.
    """

    custom_id: str
    digest: str
    key_fields: str
    question_id: Optional[str]
    run_index: int


@dataclass(frozen=True)
class Submission:
    """One batch submission in the ledger.

    Attributes:
        submission_id: local id, assigned before the create call.
        batch_id: the API's id, ``None`` until the create call returned.
        status: :data:`SUBMITTING`, :data:`IN_PROGRESS`, :data:`COLLECTED`,
            :data:`FAILED` or :data:`MISSING`.
        request_count: requests in the batch.
        submitted_at: when the create call was started, Unix seconds.
        writer_pid: process that submitted it.
        writer_host: host name of that process.
    """

    submission_id: str
    batch_id: Optional[str]
    status: str
    request_count: int
    submitted_at: float
    writer_pid: Optional[int]
    writer_host: Optional[str]


def custom_id_for(digest: str) -> str:
    """The ``custom_id`` of a call: its cache key digest (64 characters of ``[0-9a-f]``).

    The API allows 1-64 characters of ``[a-zA-Z0-9_-]``; the SHA-256 hex digest is exactly
    64, so results, which come back in any order, join exactly to their cache keys.
    """
    return digest[:64]


_SUBMISSION_COLUMNS = (
    "submission_id, batch_id, status, request_count, submitted_at, writer_pid, writer_host"
)


class BatchLedger:
    """The batch tables of a :class:`JudgeCache` file (see the module docstring).

    Args:
        cache: the open cache; the ledger shares its connection.
    """

    def __init__(self, cache: JudgeCache) -> None:
        self.cache = cache
        self._conn = cache.connection

    def _transaction(self) -> _Immediate:
        return _Immediate(self._conn)

    def in_flight(self, digests: Iterable[str]) -> dict[str, str]:
        """Which of these calls are in a batch still in flight.

        Args:
            digests: cache key digests.

        Returns:
            Digest -> submission id, for calls in a :data:`SUBMITTING` or
            :data:`IN_PROGRESS` submission.
        """
        found: dict[str, str] = {}
        for chunk, marks in _in_clause_chunks(digests):
            rows = self._conn.execute(
                "SELECT r.key, r.submission_id FROM judge_batch_requests r "
                "JOIN judge_batches b ON b.submission_id = r.submission_id "
                f"WHERE r.key IN ({marks}) AND b.status IN (?, ?) "
                "ORDER BY b.submitted_at",
                [*chunk, *IN_FLIGHT_STATUSES],
            ).fetchall()
            for key, submission_id in rows:
                found.setdefault(key, submission_id)
        return found

    def claim(
        self, chunks: list[list[LedgerRequest]], *, api_version: str
    ) -> tuple[list[Submission], set[str]]:
        """Record new submissions (status :data:`SUBMITTING`) before they are sent.

        In one ``BEGIN IMMEDIATE`` transaction, requests another process put in flight
        meanwhile are dropped, so two processes never submit the same call twice.

        Args:
            chunks: the requests of each batch to create.
            api_version: the ``anthropic-version`` of the create call.

        Returns:
            ``(submissions, taken)``: the recorded submissions (empty chunks dropped), and
            the digests that were already in flight.
        """
        submissions: list[Submission] = []
        with self._transaction():
            all_digests = [r.digest for chunk in chunks for r in chunk]
            taken = set(self.in_flight(all_digests))
            now = time.time()
            for chunk in chunks:
                free = [r for r in chunk if r.digest not in taken]
                if not free:
                    continue
                submission = Submission(
                    submission_id=uuid.uuid4().hex,
                    batch_id=None,
                    status=SUBMITTING,
                    request_count=len(free),
                    submitted_at=now,
                    writer_pid=os.getpid(),
                    writer_host=HOSTNAME,
                )
                self._conn.execute(
                    "INSERT INTO judge_batches (submission_id, batch_id, status, request_count, "
                    "api_version, submitted_at, writer_pid, writer_host) "
                    "VALUES (?, NULL, ?, ?, ?, ?, ?, ?)",
                    (
                        submission.submission_id,
                        SUBMITTING,
                        submission.request_count,
                        api_version,
                        now,
                        submission.writer_pid,
                        submission.writer_host,
                    ),
                )
                self._conn.executemany(
                    "INSERT INTO judge_batch_requests (submission_id, custom_id, key, "
                    "key_fields, question_id, run_index) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (
                            submission.submission_id,
                            r.custom_id,
                            r.digest,
                            r.key_fields,
                            r.question_id,
                            r.run_index,
                        )
                        for r in free
                    ],
                )
                submissions.append(submission)
        return submissions, taken

    def set_batch_id(
        self, submission_id: str, batch_id: str, batch_created_at: Optional[float]
    ) -> None:
        """Record the API's batch id (status :data:`IN_PROGRESS`), committed at once."""
        self._conn.execute(
            "UPDATE judge_batches SET batch_id = ?, status = ?, batch_created_at = ? "
            "WHERE submission_id = ?",
            (batch_id, IN_PROGRESS, batch_created_at, submission_id),
        )

    def set_status(
        self,
        submission_id: str,
        status: str,
        *,
        counts: Optional[dict[str, int]] = None,
        ended_at: Optional[float] = None,
    ) -> None:
        """Change a submission's status (and its last known request counts)."""
        self._conn.execute(
            "UPDATE judge_batches SET status = ?, counts = COALESCE(?, counts), "
            "ended_at = COALESCE(?, ended_at) WHERE submission_id = ?",
            (status, None if counts is None else json.dumps(counts), ended_at, submission_id),
        )

    def get(self, submission_id: str) -> Submission:
        """One submission.

        Raises:
            KeyError: if it is not in the ledger.
        """
        row = self._conn.execute(
            f"SELECT {_SUBMISSION_COLUMNS} FROM judge_batches WHERE submission_id = ?",
            (submission_id,),
        ).fetchone()
        if row is None:
            raise KeyError(submission_id)
        return Submission(*row)

    def submissions(self, status: Optional[str] = None) -> list[Submission]:
        """All submissions (or those with ``status``), oldest first."""
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = self._conn.execute(
            f"SELECT {_SUBMISSION_COLUMNS} FROM judge_batches {where} ORDER BY submitted_at",
            args,
        ).fetchall()
        return [Submission(*row) for row in rows]

    def known_batch_ids(self) -> set[str]:
        """Every batch id in the ledger."""
        rows = self._conn.execute(
            "SELECT batch_id FROM judge_batches WHERE batch_id IS NOT NULL"
        ).fetchall()
        return {row[0] for row in rows}

    def requests(self, submission_id: str) -> dict[str, LedgerRequest]:
        """``custom_id -> request`` of one submission."""
        rows = self._conn.execute(
            "SELECT custom_id, key, key_fields, question_id, run_index "
            "FROM judge_batch_requests WHERE submission_id = ?",
            (submission_id,),
        ).fetchall()
        return {row[0]: LedgerRequest(*row) for row in rows}

    def store_results(
        self,
        submission: Submission,
        requests: dict[str, LedgerRequest],
        items: list[BatchItemResult],
    ) -> None:
        """Store a chunk of result lines in one transaction.

        Succeeded replies go into ``judge_calls`` (with the batch id); every line's
        result type (and error) goes into its request row. Lines whose ``custom_id`` is
        not in ``requests`` are ignored. Storing the same lines again changes nothing.
        """
        with self._transaction():
            for item in items:
                request = requests.get(item.custom_id)
                if request is None:
                    continue
                if item.reply is not None:
                    self.cache.insert_raw(
                        request.digest,
                        request.key_fields,
                        request.question_id,
                        request.run_index,
                        item.reply,
                    )
                error = f"{item.error_type}: {item.error_message}" if item.error_type else None
                self._conn.execute(
                    "UPDATE judge_batch_requests SET result_type = ?, error = ? "
                    "WHERE submission_id = ? AND custom_id = ?",
                    (item.result_type, error, submission.submission_id, item.custom_id),
                )


class _Immediate:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
