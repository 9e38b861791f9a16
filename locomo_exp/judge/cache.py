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
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from locomo_exp.judge.client import JudgeReply

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


class JudgeCache:
    """SQLite store of completed judge calls.

    Args:
        path: database file; parent directories are created.
        busy_timeout_s: how long a writer waits for another process's lock, seconds.

    Raises:
        sqlite3.Error: if the file cannot be opened as a database.
    """

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(self.path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        self._conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed call survives a process crash (kill -9); only an
        # OS crash or power loss may lose the last commits.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)

    def get_many(self, keys: Iterable[str]) -> dict[str, JudgeReply]:
        """Look up stored replies.

        Args:
            keys: digests (:meth:`CacheKey.digest`).

        Returns:
            Digest -> stored reply, for the keys present.
        """
        found: dict[str, JudgeReply] = {}
        key_list = list(keys)
        for start in range(0, len(key_list), 500):
            chunk = key_list[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                "SELECT key, text, stop_reason, input_tokens, output_tokens, response_model "
                f"FROM judge_calls WHERE key IN ({marks})",
                chunk,
            ).fetchall()
            for key, text, stop_reason, in_tok, out_tok, model in rows:
                found[key] = JudgeReply(
                    text=text,
                    stop_reason=stop_reason,
                    input_tokens=int(in_tok),
                    output_tokens=int(out_tok),
                    model=model or "",
                )
        return found

    def put(self, key: CacheKey, reply: JudgeReply, *, question_id: Optional[str] = None) -> None:
        """Store one completed call and commit it (first writer of a key wins).

        Args:
            key: the call's key.
            reply: the API's reply.
            question_id: stored for inspection only (not part of the key).
        """
        self._conn.execute(
            "INSERT OR IGNORE INTO judge_calls (key, key_fields, question_id, run_index, text, "
            "stop_reason, input_tokens, output_tokens, response_model, created_at, writer_pid) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key.digest(),
                key.fields_json(),
                question_id,
                key.run_index,
                reply.text,
                reply.stop_reason,
                reply.input_tokens,
                reply.output_tokens,
                reply.model,
                time.time(),
                os.getpid(),
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
