"""Merge per-job judge caches into one file (sweeps on a cluster, one cache per job).

SQLite must not be shared over a network file system, so jobs on other machines each
write their own cache file; afterwards::

    python -m locomo_exp.llm.cache merge OUT.sqlite A.sqlite B.sqlite ...

copies every completed call (``judge_calls``) and the batch ledgers (``judge_batches``,
``judge_batch_requests``: a later run then polls batches still in flight instead of
submitting them again) into ``OUT.sqlite``. The first reply stored for a key wins (``OUT``
first, then the sources in order), exactly as when jobs share one file, so merging again
changes nothing. Claims of calls in flight are not copied: they belong to running processes.

Every source is checked (SQLite header and ``quick_check``) before anything is written, and
the merge is made in a temporary copy of ``OUT`` beside it that is moved into place only
when complete: a corrupt source, a full disk or a read-only directory leave ``OUT`` as it
was, with one line naming the file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from locomo_exp.llm.cache.store import SQLITE_HEADER, JudgeCache
from locomo_exp.llm.errors import JudgeError

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
    try:
        with contextlib.closing(sqlite3.connect(str(path))) as conn:
            check = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.Error as error:
        return f"judge cache merge: {path} cannot be read as a judge cache ({error})"
    if check is None or check[0] != "ok":
        return f"judge cache merge: {path} is damaged (SQLite quick_check: {check and check[0]})"
    return None


def _start_copy(output: Path) -> Path:
    """A temporary copy of ``output`` beside it (an empty file when ``output`` is new)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(
        prefix=f".tmp-{output.name}.", suffix=".sqlite", dir=output.parent
    )
    os.close(handle)
    temporary = Path(name)
    try:
        if output.is_file() and output.stat().st_size > 0:
            with contextlib.closing(sqlite3.connect(str(output))) as old, contextlib.closing(
                sqlite3.connect(str(temporary))
            ) as new:
                old.backup(new)  # includes what is still in OUT's write-ahead log
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


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
        JudgeError: a source is missing, not an SQLite database, damaged, or is ``output``
            (checked for every source before anything is written); no source given;
            ``output`` cannot be written (it is then unchanged).
    """
    output = Path(output)
    if not sources:
        raise JudgeError("judge cache merge: give at least one source cache file")
    problems = [p for p in (_source_problem(Path(s), output) for s in sources) if p]
    if problems:
        raise JudgeError("; ".join(problems))
    report = MergeReport(output=output)
    try:
        temporary = _start_copy(output)
    except (OSError, sqlite3.Error) as error:
        raise JudgeError(f"judge cache merge: cannot write {output}: {_reason(error)}") from None
    try:
        _merge_into(temporary, sources, report)
        os.replace(temporary, output)
    except (OSError, sqlite3.Error) as error:
        raise JudgeError(
            f"judge cache merge: cannot write {output}: {_reason(error)}; it is unchanged"
        ) from None
    finally:
        for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink()
    return report


def _reason(error: BaseException) -> str:
    return " ".join(str(getattr(error, "strerror", None) or error or type(error).__name__).split())


def _merge_into(target: Path, sources: list[Path], report: MergeReport) -> None:
    """Copy every source into ``target`` (a cache file), one transaction per source."""
    with JudgeCache(target) as cache:
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
