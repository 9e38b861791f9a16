"""The call cache: completed judge calls in one SQLite file (WAL mode).

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

The same file holds the claims of calls in flight (:mod:`.claims`) and the ledger of
Message Batches (:mod:`.ledger`); this module creates every table.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import random
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.messages import JudgeReply

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

HOSTNAME = socket.gethostname()
"""This machine's host name, stored with claims and batch submissions (pids are only
checked on this host)."""

SQL_IN_CHUNK = 500
"""Keys per ``IN (...)`` query (SQLite limits the number of bound parameters)."""


def in_clause_chunks(items: Iterable[str]) -> Iterator[tuple[list[str], str]]:
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
        template_sha256: sha256 of the template file (``judge.protocol=template``), else
            ``None`` and left out of the key (keys of other protocols are unchanged).
        provider: ``judge.provider``; in the key's fields only when not ``anthropic``, so
            every key made before providers existed is unchanged (an old command hits its
            old cache).
        endpoint: the custom endpoint, normalised
            (:func:`locomo_exp.llm.providers.cache_endpoint`), or ``None`` for the
            provider's default one; in the key's fields only when set, so keys of the
            default endpoints are unchanged.
    """

    model: str
    api_version: str
    temperature: float | None
    protocol: str
    prompt_version: str
    max_tokens: int
    structured_output: bool
    question: str
    ground_truth: str | None
    prediction: str
    category: int
    run_index: int
    template_sha256: str | None = None
    provider: str = "anthropic"
    endpoint: str | None = None

    def fields_json(self) -> str:
        """Canonical JSON of the key fields (sorted keys, no whitespace).

        Encoded once per key: the digest (when the call is built) and the stored row
        (when its reply arrives) share the text.
        """
        return self._fields_text

    @functools.cached_property
    def _fields_text(self) -> str:
        extra: dict[str, object] = {}
        if self.template_sha256 is not None:
            extra["template_sha256"] = self.template_sha256
        if self.provider != "anthropic":
            extra["provider"] = self.provider
        if self.endpoint is not None:
            extra["endpoint"] = self.endpoint
        return json.dumps(
            {
                **extra,
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


def cache_path_problem(path: Path) -> str | None:
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
        """The SQLite connection (autocommit; shared with the claims and the batch ledger)."""
        return self._conn

    def get(self, key: str) -> JudgeReply | None:
        """The stored reply of one digest, or ``None``."""
        row = self._conn.execute(
            "SELECT text, stop_reason, input_tokens, output_tokens, response_model, batch_id "
            "FROM judge_calls WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else reply_from_row(row)

    def get_many(self, keys: Iterable[str]) -> dict[str, JudgeReply]:
        """Look up stored replies.

        Args:
            keys: digests (:meth:`CacheKey.digest`).

        Returns:
            Digest -> stored reply, for the keys present.
        """
        found: dict[str, JudgeReply] = {}
        for chunk, marks in in_clause_chunks(keys):
            rows = self._conn.execute(
                "SELECT key, text, stop_reason, input_tokens, output_tokens, response_model, "
                f"batch_id FROM judge_calls WHERE key IN ({marks})",
                chunk,
            ).fetchall()
            for row in rows:
                found[row[0]] = reply_from_row(row[1:])
        return found

    def put(self, key: CacheKey, reply: JudgeReply, *, question_id: str | None = None) -> None:
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
        question_id: str | None,
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
                reply.input_tokens if reply.usage_known else -1,  # -1: no usage in the reply
                reply.output_tokens if reply.usage_known else -1,
                reply.model,
                time.time(),
                os.getpid(),
                reply.batch_id,
            ),
        )

    def transaction(self) -> Immediate:
        """A ``BEGIN IMMEDIATE`` transaction on this cache's connection (a context manager)."""
        return Immediate(self._conn)

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


def reply_from_row(row: tuple[str, str | None, int, int, str | None, str | None]) -> JudgeReply:
    """The reply of a stored row.

    Args:
        row: ``(text, stop_reason, input_tokens, output_tokens, response_model,
            batch_id)``; input tokens of -1: the reply carried no token usage.
    """
    text, stop_reason, in_tok, out_tok, model, batch_id = row
    known = int(in_tok) >= 0  # -1: the reply carried no token usage
    return JudgeReply(
        text=text,
        stop_reason=stop_reason,
        input_tokens=max(int(in_tok), 0),
        output_tokens=max(int(out_tok), 0),
        model=model or "",
        batch_id=batch_id,
        usage_known=known,
    )


class Immediate:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection.

    Args:
        conn: the connection (``isolation_level=None``).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
