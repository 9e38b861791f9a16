"""An MLflow run set up on a background thread while the job's judge calls wait on the network.

Importing MLflow and opening its store take about a second of CPU (``import mlflow``, the
SQLAlchemy store and its mappers). A judge job spends most of its time waiting for API
replies, so :func:`deferred_mlflow_run` lets the job start that work (:meth:`PendingRun.start`)
right before its first call, on a thread, and take the run (:meth:`PendingRun.wait`) once
the calls are done. MLflow's active run is per thread: the thread only *creates* the run
and logs its first params with the client; :meth:`PendingRun.wait` makes it active on the
job's thread.

Errors: a store that cannot be used raises :class:`~locomo_exp.tracking.store.TrackingStoreError`
(one line) from :meth:`PendingRun.wait`. The thread also hands the error at once to
``on_failure``, with which the job stops its calls (the judge's
:class:`~locomo_exp.llm.stop.CallsStop`): the calls already paid for are cached and the
outputs written, so nothing is lost and the same command resumes from the cache. When the
job itself fails, its own error is the one raised; the store's is logged, unless the job's
error was caused by it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from locomo_exp.tracking.store import RunSpec, activate_run, ending_run, run_creator

log = logging.getLogger(__name__)


class PendingRun:
    """A run being created on a background thread; :meth:`wait` gives it, made active.

    Args:
        create: creates the run and returns its id (:func:`~locomo_exp.tracking.store.create_run`).
        tracking_uri: the store (for error lines).
        then: run on the same thread after the run is created (warming imports the job
            needs after its calls); its errors are ignored (the real use raises them).
        on_failure: called on the thread with the error when the run cannot be created
            (the job stops spending there); its own errors are logged.
    """

    def __init__(
        self,
        create: Callable[[], str],
        tracking_uri: str,
        then: Callable[[], object] | None,
        on_failure: Callable[[BaseException], object] | None = None,
    ) -> None:
        self._create = create
        self._tracking_uri = tracking_uri
        self._then = then
        self._on_failure = on_failure
        self._thread: threading.Thread | None = None
        self._run_id: str | None = None
        self._error: BaseException | None = None
        self._active: Any = None

    def start(self) -> None:
        """Start creating the run on a background thread (once; later calls do nothing)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="mlflow-run", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        try:
            self._run_id = self._create()
        except BaseException as error:  # handed to the job's thread by wait()
            self._error = error
            if self._on_failure is not None:
                try:
                    self._on_failure(error)
                except Exception:  # wait() still raises the store's error
                    log.warning("could not report the MLflow store's failure", exc_info=True)
            return
        if self._then is not None:
            try:
                self._then()
            except Exception:  # only a warm-up: the job's own import raises it again
                log.debug("warming up after the MLflow run failed", exc_info=True)

    def wait(self) -> Any:
        """The run, made active on this thread (created here if :meth:`start` was not called).

        Returns:
            The ``mlflow.ActiveRun``.

        Raises:
            TrackingStoreError: the store cannot be opened, or the run not created.
        """
        if self._active is not None:
            return self._active
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._run_id is not None
        self._active = activate_run(self._tracking_uri, self._run_id)
        return self._active

    def settle(self, raising: BaseException) -> Any:
        """Like :meth:`wait` while the job raises ``raising``: ``None`` when the run failed.

        The store's error is logged, unless the job raises it or an error it caused
        (the judge's calls stopped by ``on_failure``, whose line names it).
        """
        try:
            return self.wait()
        except Exception as error:
            if error is not raising and error is not raising.__cause__:
                log.warning("MLflow run not recorded: %s", error)
            return None


@contextlib.contextmanager
def deferred_mlflow_run(
    spec: RunSpec,
    *,
    log_file: Path | None = None,
    then: Callable[[], object] | None = None,
    on_failure: Callable[[BaseException], object] | None = None,
) -> Iterator[PendingRun]:
    """Like :func:`~locomo_exp.tracking.store.mlflow_run`, with the run created when the job asks.

    The same steps as ``mlflow_run`` (:func:`~locomo_exp.tracking.store.run_creator`,
    :func:`~locomo_exp.tracking.store.activate_run`,
    :func:`~locomo_exp.tracking.store.ending_run`), the creation on a thread. The body
    calls :meth:`PendingRun.start` when it begins to wait on the network and
    :meth:`PendingRun.wait` when it needs the run; a body that calls neither gets its run
    created at the end. The run ends FINISHED, KILLED (``KeyboardInterrupt``) or FAILED
    (anything else, tag ``error``), with ``log_file`` uploaded, as with ``mlflow_run``.

    Args:
        spec: the run to create (its ``params`` are the measurement's settings).
        log_file: uploaded when the run ends (the job's ``locomo_exp.log``).
        then: run on the background thread after the run is created (see :class:`PendingRun`).
        on_failure: called on the background thread with the store's error when the run
            cannot be created (see :class:`PendingRun`).

    Yields:
        The :class:`PendingRun`.

    Raises:
        TrackingStoreError: the store cannot be used (from :meth:`PendingRun.wait`, or at
            the end when the body never asked); a body's own error is raised instead.
    """
    pending = PendingRun(run_creator(spec), spec.tracking_uri, then, on_failure)
    with ending_run(pending.wait, log_file, settle=pending.settle):
        yield pending


__all__ = ["PendingRun", "deferred_mlflow_run"]
