"""Checks of ``tracking.uri`` before any judge call, without importing MLflow.

A judge job creates its MLflow run on a thread while the calls wait
(:mod:`locomo_exp.tracking.pending`), so a store MLflow cannot use would only be
reported after the calls were paid for. :func:`check_tracking_uri` refuses, in one
line, what can be known without MLflow (no import: about a second of CPU) and without
writing anything: a scheme no tracking store is registered for, a database driver that
is not installed, a file store MLflow 3 refuses, an SQLite file or directory that
cannot be written, an ``http(s)`` server that does not answer (one short request: MLflow
itself would retry for minutes). What only the store can tell (a server that refuses, a
database that is not MLflow's) is still found when the run is created.

The schemes and rules are MLflow 3's (``mlflow/tracking/_tracking_service/utils.py``:
``_register_tracking_stores``; ``mlflow/utils/uri.py``: ``get_uri_scheme``,
``extract_db_type_from_uri``; ``mlflow/store/db/utils.py``:
``_make_parent_dirs_if_sqlite``, which creates a missing parent directory of an SQLite
file; ``mlflow/store/tracking/file_store.py``, which refuses a file store unless
``MLFLOW_ALLOW_FILE_STORE`` is true).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import socket
import ssl
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from locomo_exp.config.secrets import redact_uri
from locomo_exp.tracking.store import TrackingStoreError

DATABASE_ENGINES = ("postgresql", "mysql", "sqlite", "mssql")
"""SQLAlchemy stores MLflow registers (``mlflow.store.db.db_types.DATABASE_ENGINES``)."""

BUILT_IN_SCHEMES = ("", "file", "databricks", "databricks-uc", "uc", "http", "https")
"""The other schemes MLflow registers a tracking store for ("" is a plain path)."""

DEFAULT_DRIVERS = {"postgresql": "psycopg2", "mysql": "MySQLdb", "mssql": "pyodbc"}
"""The module SQLAlchemy imports for an engine named without ``+driver``."""

DRIVER_MODULES = {
    "psycopg2": "psycopg2",
    "psycopg": "psycopg",
    "pg8000": "pg8000",
    "asyncpg": "asyncpg",
    "pymysql": "pymysql",
    "mysqldb": "MySQLdb",
    "mysqlconnector": "mysql.connector",
    "pyodbc": "pyodbc",
    "pymssql": "pymssql",
}
"""``engine+driver`` names and the module each imports (others are not checked)."""

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file (sqlite.org/fileformat.html §1.3)."""


DEFAULT_CONNECT_TIMEOUT_S = 5.0
"""Seconds an ``http(s)`` tracking server has to answer (``tracking.connect_timeout_s``)."""

HEALTH_PATH = "/health"
"""The MLflow tracking server's health endpoint (``mlflow server`` answers ``OK``)."""


class TrackingServerUnreachable(TrackingStoreError):
    """No server answers at an ``http(s)`` ``tracking.uri`` (refused, unknown host, no answer)."""

    def __init__(self, uri: str, reason: str):
        ValueError.__init__(
            self,
            f"tracking.uri={uri}: no MLflow server answers ({reason}); start it or use "
            "tracking=none",
        )


def _public_uri(uri: str) -> str:
    """``uri`` without user info (a password is never repeated)."""
    parts = urllib.parse.urlsplit(uri)
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


@functools.lru_cache(maxsize=16)
def server_problem(uri: str, timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> str | None:
    """Why no server answers at ``uri`` (one ``GET <uri>/health``), or ``None`` when one does.

    Any HTTP answer counts (``401``, ``404`` from a proxy ...), as does a TLS handshake
    problem (MLflow has its own TLS settings): only a connection that cannot be made or
    gets no answer within ``timeout_s`` is a problem. The answer is kept per URI for the
    process (a sweep checks every job).

    Args:
        uri: an ``http(s)://`` tracking URI (user info is not sent).
        timeout_s: seconds to connect and to wait for the answer.

    Returns:
        ``"connection refused"``, ``"no answer within 5 s"``, ``"name or service not
        known"``..., or ``None``.
    """
    url = _public_uri(uri).split("?", 1)[0].rstrip("/") + HEALTH_PATH
    try:
        with urllib.request.urlopen(url, timeout=timeout_s):  # noqa: S310 - http(s) only
            return None
    except urllib.error.HTTPError:  # a status code is an answer
        return None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, ssl.SSLError):
            return None
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return f"no answer within {timeout_s:g} s"
        if isinstance(reason, OSError) and reason.strerror:
            return reason.strerror[:1].lower() + reason.strerror[1:]
        return str(reason) or type(reason).__name__


def _refuse(uri: str, problem: str) -> TrackingStoreError:
    return TrackingStoreError(uri, ValueError(problem))


def _plugin_schemes() -> set[str]:
    """Schemes other packages register under MLflow's ``mlflow.tracking_store`` entry points."""
    from importlib.metadata import entry_points

    return {entry.name for entry in entry_points(group="mlflow.tracking_store")}


def _scheme(uri: str) -> str:
    """The scheme MLflow looks its store up by (its ``get_uri_scheme``)."""
    if uri in {"databricks", "databricks-uc", "uc"}:
        return uri
    scheme = urllib.parse.urlparse(uri).scheme
    if any(scheme.lower().startswith(engine) for engine in DATABASE_ENGINES):
        return scheme
    if len(scheme) == 1 and scheme.isalpha():  # C:\... on Windows
        return ""
    return scheme


def _creatable(uri: str, path: Path, what: str) -> None:
    """``path`` (a file or directory MLflow creates when missing) can be written."""
    if path.exists():
        target = path
    else:  # MLflow creates the missing directories: the nearest existing one is written
        target = path.parent
        while not target.exists() and target != target.parent:
            target = target.parent
        if not target.is_dir():
            raise _refuse(uri, f"{target} is not a directory, so {path} cannot be created")
    try:  # opened for writing, or a file made and removed: root passes os.access anyway
        if target.is_dir():
            with tempfile.NamedTemporaryFile(prefix=".locomo_exp_check_", dir=target):
                pass
        else:
            with target.open("r+b"):
                pass
    except OSError as error:
        reason = error.strerror or str(error)
        raise _refuse(uri, f"{what} {target} cannot be written: {reason}") from None


def _check_sqlite(uri: str) -> None:
    if uri == "sqlite://":  # an in-memory database
        return
    if not uri.startswith("sqlite:///"):
        raise _refuse(
            uri, "an SQLite store is sqlite:///relative/file.db or sqlite:////absolute/file.db"
        )
    raw = uri[len("sqlite:///") :].split("?", 1)[0]
    if not raw or raw == ":memory:":
        return
    path = Path(raw)
    if path.is_dir():
        raise _refuse(uri, f"{path} is a directory, not a database file")
    if path.is_file() and path.stat().st_size > 0:
        with path.open("rb") as handle:
            if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                raise _refuse(uri, f"{path} is not an SQLite database")
    _creatable(uri, path, "the database file" if path.exists() else "the directory")


def _check_file_store(uri: str) -> None:
    parsed = urllib.parse.urlparse(uri)
    path = Path(urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else uri)
    if path.is_file():  # a path that is a file is no store of any kind (/etc/passwd)
        with path.open("rb") as handle:
            sqlite = handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
        raise _refuse(
            uri,
            f"{path} is an SQLite database: use tracking.uri=sqlite:///{path.resolve()}"
            if sqlite
            else f"{path} is a regular file, not an MLflow store directory or SQLite database",
        )
    allowed = os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").strip().lower() in {"true", "1"}
    if not allowed:
        raise _refuse(
            uri,
            "MLflow 3 refuses a file store unless MLFLOW_ALLOW_FILE_STORE=true; "
            "use a database, e.g. tracking.uri=sqlite:///mlflow.db",
        )
    if path.exists() and not path.is_dir():
        raise _refuse(uri, f"{path} is not a directory")
    _creatable(uri, path, "the directory")


def _check_database(uri: str, scheme: str) -> None:
    if scheme.count("+") > 1:
        raise _refuse(uri, f"{scheme}: at most one +driver after the database name")
    engine, _, driver = scheme.partition("+")
    if engine not in DATABASE_ENGINES:
        supported = ", ".join(DATABASE_ENGINES)
        raise _refuse(uri, f"unknown database {engine!r} (MLflow supports {supported})")
    if engine == "sqlite":
        _check_sqlite(uri)
        return
    if importlib.util.find_spec("sqlalchemy") is None:
        raise _refuse(uri, "a database store needs SQLAlchemy, which is not installed")
    module = DRIVER_MODULES.get(driver.lower()) if driver else DEFAULT_DRIVERS[engine]
    if module is not None and importlib.util.find_spec(module.split(".")[0]) is None:
        raise _refuse(uri, f"the database driver {module} is not installed")


def check_tracking_uri(uri: str, *, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> None:
    """Refuse a tracking URI MLflow cannot use, in one line, before any call; writes nothing.

    Checks, without importing MLflow: a scheme MLflow registers a store for (plain path,
    ``file:``, ``sqlite:``, ``postgresql:``, ``mysql:``, ``mssql:`` with an optional
    ``+driver``, ``http(s):``, ``databricks``, or a plugin's entry point); an installed
    database driver; for SQLite, a database file (or its nearest existing directory,
    MLflow creating the missing ones) that can be written and that, when not empty, is an
    SQLite database; for a file store, ``MLFLOW_ALLOW_FILE_STORE`` and a writable directory;
    for ``http(s):``, a host and a server that answers (:func:`server_problem`).

    Args:
        uri: the resolved tracking URI (:func:`~locomo_exp.tracking.store.resolve_tracking_uri`).
        connect_timeout_s: seconds an ``http(s)`` server has to answer
            (``tracking.connect_timeout_s``).

    Raises:
        TrackingStoreError: one line naming ``tracking.uri`` and the problem
            (:class:`TrackingServerUnreachable` when no server answers).
    """
    scheme = _scheme(uri)
    lowered = scheme.lower()
    if any(lowered.startswith(engine) for engine in DATABASE_ENGINES):
        _check_database(uri, lowered)
    elif scheme in ("", "file"):
        _check_file_store(uri)
    elif scheme in ("http", "https"):
        if not urllib.parse.urlparse(uri).netloc:
            raise _refuse(uri, f"no host after {scheme}://")
        problem = server_problem(uri, connect_timeout_s)
        if problem:
            raise TrackingServerUnreachable(redact_uri(uri), problem)
    elif scheme not in BUILT_IN_SCHEMES and scheme not in _plugin_schemes():
        raise _refuse(
            uri,
            f"unknown scheme {scheme}:, MLflow's are sqlite:///, postgresql://, mysql://, "
            "mssql://, http(s)://, databricks, file: or a directory",
        )


__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "TrackingServerUnreachable",
    "check_tracking_uri",
    "server_problem",
]
