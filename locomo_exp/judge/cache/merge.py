"""Merge per-job judge caches into one file (sweeps on a cluster, one cache per job).

SQLite must not be shared over a network file system, so jobs on other machines each
write their own cache file; afterwards::

    python -m locomo_exp.judge.cache merge OUT.sqlite A.sqlite B.sqlite ...

copies every completed call (``judge_calls``) and the batch ledgers (``judge_batches``,
``judge_batch_requests``: a later run then polls batches still in flight instead of
submitting them again) into ``OUT.sqlite``. The first reply stored for a key wins (``OUT``
first, then the sources in order), exactly as when jobs share one file, so merging again
changes nothing. Claims of calls in flight are not copied: they belong to running processes.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from locomo_exp.judge.cache.store import SQLITE_HEADER, JudgeCache
from locomo_exp.judge.errors import JudgeError

logger = logging.getLogger(__name__)

_MERGED_TABLES = ("judge_calls", "judge_batches", "judge_batch_requests")
"""Tables copied, in this order (the ledger's requests after their batches)."""


@dataclass
class MergeReport:
    """What a merge did.

    Attributes:
        output: the merged file.
        added: source file -> rows added per table (``{"judge_calls": 120, ...}``).
        conflicts: source file -> calls whose key was already stored with another reply
            (the stored reply is kept).
    """

    output: Path
    added: dict[str, dict[str, int]] = field(default_factory=dict)
    conflicts: dict[str, int] = field(default_factory=dict)

    @property
    def calls_added(self) -> int:
        """Completed calls added over all sources."""
        return sum(counts.get("judge_calls", 0) for counts in self.added.values())


def _source_problem(path: Path, output: Path) -> str | None:
    if not path.is_file():
        return f"judge cache merge: {path} does not exist or is not a file"
    with path.open("rb") as handle:
        if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            return f"judge cache merge: {path} is not a judge cache (not an SQLite database)"
    if path.resolve() == output.resolve():
        return f"judge cache merge: {path} is the output file; give it only once, as OUT"
    return None


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA {schema}.table_info({table})")]


def merge_caches(output: Path, sources: list[Path]) -> MergeReport:
    """Copy the completed calls and batch ledgers of ``sources`` into ``output``.

    Args:
        output: the merged cache file (created if missing; may already hold calls).
        sources: per-job cache files (only read from).

    Returns:
        A :class:`MergeReport` with rows added per source and table.

    Raises:
        JudgeError: a source is missing, not an SQLite database, or is ``output``
            (checked for every source before anything is written); no source given.
    """
    output = Path(output)
    if not sources:
        raise JudgeError("judge cache merge: give at least one source cache file")
    problems = [p for p in (_source_problem(Path(s), output) for s in sources) if p]
    if problems:
        raise JudgeError("; ".join(problems))
    report = MergeReport(output=output)
    with JudgeCache(output) as cache:
        conn = cache.connection
        for source in sources:
            name = str(source)
            conn.execute("ATTACH DATABASE ? AS src", (str(Path(source)),))
            try:
                report.conflicts[name] = _count_conflicts(conn)
                with cache.transaction():
                    report.added[name] = {
                        table: _copy_table(conn, table) for table in _MERGED_TABLES
                    }
            finally:
                conn.execute("DETACH DATABASE src")
            logger.info(
                "judge cache merge: %s: %d call(s) added (%d already stored with another reply)",
                name,
                report.added[name]["judge_calls"],
                report.conflicts[name],
            )
    return report


def _count_conflicts(conn: sqlite3.Connection) -> int:
    if "judge_calls" not in _source_tables(conn):
        return 0
    row = conn.execute(
        "SELECT COUNT(*) FROM src.judge_calls s JOIN main.judge_calls m ON s.key = m.key "
        "WHERE s.text IS NOT m.text"
    ).fetchone()
    return int(row[0])


def _source_tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM src.sqlite_master WHERE type = 'table'").fetchall()
    return {row[0] for row in rows}


def _copy_table(conn: sqlite3.Connection, table: str) -> int:
    """Insert the source's rows of ``table`` that are not stored yet; rows added."""
    if table not in _source_tables(conn):
        return 0
    wanted = _columns(conn, "main", table)
    present = set(_columns(conn, "src", table))
    shared = [c for c in wanted if c in present]  # an older source may lack a column
    names = ", ".join(shared)
    before = conn.total_changes
    conn.execute(f"INSERT OR IGNORE INTO main.{table} ({names}) SELECT {names} FROM src.{table}")
    return conn.total_changes - before
