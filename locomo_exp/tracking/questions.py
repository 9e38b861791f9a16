"""Every question of a run as an MLflow trace, browsable in MLflow's GenAI evaluations pages.

One trace per :class:`~locomo_exp.results.questions.QuestionRow` (``tracking.questions=true``):

- the root span ``question``: inputs ``{question_id, question, kind}``, output the prediction;
- trace tags: ``question_id``, ``kind``, ``gold`` (a tag, not an expectation: MLflow's
  evaluations header breaks past 1,000 distinct expectation values, docs/mlflow.md) and the
  row's own tags (``control=...`` for an audit control);
- assessments (``mlflow.log_feedback``): each metric as a number (F1 0-1), each verdict as
  pass/fail with the judge's reason as rationale and the judge model as source
  (``LLM_JUDGE``; ``CODE`` for metrics);
- metadata ``mlflow.sourceRun``: the run, whose Evaluations tab then lists the traces; the
  run is tagged ``mlflow.runType=genai_evaluate`` (what ``mlflow.genai.evaluate`` sets).

Cost: the assessments are attached while the trace is open, so MLflow writes each trace with
its tags and assessments in one ``start_trace`` transaction instead of one per assessment;
the traces are written by MLflow's asynchronous exporter, flushed every
:data:`FLUSH_EVERY` traces (its queue drops traces past 1,000 unless flushed). The logging
runs on a background thread (:class:`QuestionLogging`) so the job's other output logging
overlaps it; ``benchmarks/question_traces.py`` measures it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from locomo_exp.results.questions import Flip, QuestionRow

log = logging.getLogger(__name__)

FLUSH_EVERY = 200
"""Traces written between two flushes of MLflow's asynchronous trace queue (1,000 items)."""

RUN_TYPE_TAG = "mlflow.runType"
EVALUATION_RUN_TYPE = "genai_evaluate"
"""The run tag MLflow's ``mlflow.genai.evaluate`` sets (``mlflow/utils/mlflow_tags.py``)."""

SOURCE_RUN_KEY = "mlflow.sourceRun"
"""Trace metadata naming the run a trace belongs to (MLflow's ``TraceMetadataKey.SOURCE_RUN``)."""

FLIPPED_TAG = "flipped"
FLIP_TAG = "flip"
QUESTION_ID_TAG = "question_id"
GOLD_TAG = "gold"
MAX_TAG_CHARS = 4000  # a long gold answer is cut: MLflow's trace tag values are limited


def _tag_value(value: str) -> str:
    return value if len(value) <= MAX_TAG_CHARS else value[: MAX_TAG_CHARS - 1] + "…"


def log_question_traces(rows: Sequence[QuestionRow], run_id: str) -> dict[str, str]:
    """Log each row as a trace of ``run_id`` (the run must be active in the process).

    Args:
        rows: the run's questions (ids unique).
        run_id: the MLflow run the traces belong to (``mlflow.sourceRun``).

    Returns:
        ``{question_id: trace_id}``.

    Raises:
        mlflow.exceptions.MlflowException: the store refused a write.
    """
    import mlflow
    from mlflow.entities import AssessmentSource

    # MLflow's trace exporter keeps the store it first saw; a process that ran a job on
    # another store (an in-process sweep, a test) would send the traces there
    mlflow.tracing.reset()  # type: ignore[no-untyped-call]
    metric_source = AssessmentSource(source_type="CODE", source_id="locomo_exp")
    trace_ids: dict[str, str] = {}
    for index, row in enumerate(rows, start=1):
        with mlflow.start_span(name="question", span_type="CHAIN") as span:
            span.set_inputs(
                {"question_id": row.question_id, "question": row.question, "kind": row.kind}
            )
            span.set_outputs(row.prediction)
            mlflow.update_current_trace(
                tags={
                    QUESTION_ID_TAG: row.question_id,
                    "kind": row.kind,
                    GOLD_TAG: _tag_value(row.gold),
                    **{key: _tag_value(value) for key, value in row.tags.items()},
                },
                metadata={SOURCE_RUN_KEY: run_id},
            )
            trace_id = span.trace_id
            for name, value in row.metrics.items():
                mlflow.log_feedback(
                    trace_id=trace_id, name=name, value=value, source=metric_source
                )
            for verdict in row.verdicts:
                source = AssessmentSource(
                    source_type="LLM_JUDGE", source_id=verdict.source or "unknown"
                )
                if verdict.passed is None:
                    mlflow.log_feedback(
                        trace_id=trace_id, name=verdict.name, source=source,
                        error=mlflow.entities.AssessmentError(
                            error_code="UNSCORED", error_message=verdict.reason or "no verdict"
                        ),
                    )
                else:
                    mlflow.log_feedback(
                        trace_id=trace_id, name=verdict.name, value=verdict.passed,
                        rationale=verdict.reason or None, source=source,
                    )
        trace_ids[row.question_id] = trace_id
        if index % FLUSH_EVERY == 0:
            mlflow.flush_trace_async_logging()
    mlflow.flush_trace_async_logging()
    mlflow.MlflowClient().set_tag(run_id, RUN_TYPE_TAG, EVALUATION_RUN_TYPE)
    return trace_ids


class QuestionLogging:
    """:func:`log_question_traces` on a background thread; :meth:`wait` joins it.

    A failure is logged as a warning (the run's outputs and metrics are already logged; the
    traces are a view of ``scores.jsonl``), never raised into the job.

    Args:
        rows: the run's questions.
        run_id: the active run.
        log_traces: the logging function (tests pass a fake).
    """

    def __init__(
        self,
        rows: Sequence[QuestionRow],
        run_id: str,
        log_traces: Callable[[Sequence[QuestionRow], str], Mapping[str, str]] = log_question_traces,
    ) -> None:
        self._rows = rows
        self._run_id = run_id
        self._log = log_traces
        self.trace_ids: Mapping[str, str] = {}
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="mlflow-questions", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            self.trace_ids = self._log(self._rows, self._run_id)
        except Exception as error:  # a view of scores.jsonl: the job's outputs stand
            self.error = error
            log.warning("per-question traces not logged to MLflow: %s", error)

    def wait(self) -> Mapping[str, str]:
        """Join the thread; returns ``{question_id: trace_id}`` (``{}`` when it failed)."""
        self._thread.join()
        return self.trace_ids


def run_question_traces(
    run_id: str, experiment_id: str, tracking_uri: str | None = None
) -> dict[str, str]:
    """The traces of a run, by their ``question_id`` tag.

    Args:
        run_id: the run.
        experiment_id: its experiment.
        tracking_uri: the store (``None``: the process's current one).

    Returns:
        ``{question_id: trace_id}`` (empty when the run logged none).
    """
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri)
    out: dict[str, str] = {}
    token: str | None = None
    while True:
        page: Any = client.search_traces(
            locations=[experiment_id], run_id=run_id, include_spans=False,
            max_results=500, page_token=token,
        )
        for trace in page:
            qid = trace.info.tags.get(QUESTION_ID_TAG)
            if qid is not None:
                out[qid] = trace.info.trace_id
        token = page.token
        if not token:
            return out


def tag_flips(
    run_id: str, experiment_id: str, flipped: Mapping[str, Flip], tracking_uri: str | None = None
) -> int:
    """Tag, in one run's traces, the questions whose verdict flips (``flipped``, ``flip``).

    Args:
        run_id: the compared run whose traces are tagged.
        experiment_id: its experiment.
        flipped: ``{question_id: "gained" | "lost"}`` (``results.questions.flips``).
        tracking_uri: the store (``None``: the process's current one).

    Returns:
        How many traces were tagged (a question without a trace is skipped).
    """
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri)
    traces = run_question_traces(run_id, experiment_id, tracking_uri)
    tagged = 0
    for qid, direction in flipped.items():
        trace_id = traces.get(qid)
        if trace_id is None:
            continue
        client.set_trace_tag(trace_id, FLIPPED_TAG, "true")
        client.set_trace_tag(trace_id, FLIP_TAG, direction)
        tagged += 1
    return tagged


def find_run(tracking_uri: str, experiment: str, output_dir: str) -> tuple[str, str] | None:
    """The latest run of ``experiment`` whose run directory tag is ``output_dir``.

    Args:
        tracking_uri: the store.
        experiment: the experiment name.
        output_dir: the run directory's absolute path (tag ``locomo_exp.output_dir``).

    Returns:
        ``(run_id, experiment_id)``, or ``None`` when no run has that tag.
    """
    from mlflow import MlflowClient

    from locomo_exp.tracking.metrics import OUTPUT_DIR_TAG

    client = MlflowClient(tracking_uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return None
    value = output_dir.replace("'", "\\'")
    runs = client.search_runs(
        [found.experiment_id], filter_string=f"tags.`{OUTPUT_DIR_TAG}` = '{value}'",
        order_by=["attributes.start_time DESC"], max_results=1,
    )
    return (runs[0].info.run_id, found.experiment_id) if runs else None


def run_experiment_id(tracking_uri: str, run_id: str) -> str:
    """The experiment of a logged run (``MlflowClient.get_run``).

    Raises:
        mlflow.exceptions.MlflowException: no such run.
    """
    from mlflow import MlflowClient

    return str(MlflowClient(tracking_uri).get_run(run_id).info.experiment_id)


def evaluations_url(
    base: str,
    experiment_id: str,
    run_id: str,
    compare_to: str | None = None,
    filters: Sequence[str] = (),
) -> str:
    """The MLflow UI address of a run's Evaluations tab.

    The form is read from MLflow 3.17.2's UI bundle: ``#/experiments/<exp>/runs/<run>/
    evaluations``, ``compareToRunUuid=<run>`` and one ``filter=<column>::<op>::<value>::<key>``
    per filter (e.g. ``TAG::=::true::flipped``).

    Args:
        base: the server's address (``http://127.0.0.1:5000``).
        experiment_id: the experiment.
        run_id: the run.
        compare_to: the run compared with, or ``None``.
        filters: filters in the UI's form.

    Returns:
        The address.
    """
    from urllib.parse import quote

    query = []
    if compare_to:
        query.append(f"compareToRunUuid={compare_to}")
    query.extend(f"filter={quote(item, safe=':=')}" for item in filters)
    suffix = ("?" + "&".join(query)) if query else ""
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}/evaluations{suffix}"


FLIP_FILTER = f"TAG::=::true::{FLIPPED_TAG}"

__all__ = [
    "EVALUATION_RUN_TYPE",
    "FLIPPED_TAG",
    "FLIP_FILTER",
    "FLIP_TAG",
    "QuestionLogging",
    "evaluations_url",
    "find_run",
    "log_question_traces",
    "run_experiment_id",
    "run_question_traces",
    "tag_flips",
]
