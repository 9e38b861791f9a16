"""MLflow tracking: the one package that imports MLflow and names what is logged.

- :mod:`.names`: legal names, one param stringification, secrets left out (pure).
- :mod:`.metrics`: every metric, param and tag, from ``summary.json``'s layout and the
  sweep summary's rows (pure); every score metric in percent (0-100).
- :mod:`.headline`: what MLflow's pages show first: the measurement's params, the
  headline metrics (the rest in ``metrics.json``), the run's description (pure).
- :mod:`.run_names`: sweep child run names and swept-value labels (pure).
- :mod:`.store`: the store (URI, experiment created as a model-training experiment) and
  one job's run (MLflow's fluent API).
- :mod:`.pending`: a judge job's run, set up on a thread while the calls wait on the network.
- :mod:`.preflight`: ``tracking.uri`` checked before any call, without importing MLflow.
- :mod:`.sweep`: a sweep's parent run and its children (``MlflowClient``).
- :mod:`.questions`: every question as a trace with its assessments; flip tags of a compare.
- :mod:`.ui`: the command that opens MLflow's UI on a store, printed after every job.
"""

from __future__ import annotations

from locomo_exp.tracking.headline import (
    CONFIG_PARAM_KEYS,
    METRICS_ARTIFACT,
    NOTE_TAG,
    RESOLVED_CONFIG_ARTIFACT,
    card_params,
    config_measurement_params,
    headline_metrics,
    resolved_config,
    run_description,
    warning_tags,
)
from locomo_exp.tracking.intervals import INTERVALS_TABLE, interval_rows
from locomo_exp.tracking.metrics import (
    PERCENT,
    child_tags,
    config_params,
    input_params,
    joined_ids,
    judge_metrics,
    judge_params,
    judge_tags,
    parent_metrics,
    parent_params,
    parent_tags,
    pending_batch_tags,
    run_metrics,
    run_tags,
    sweep_table,
)
from locomo_exp.tracking.names import (
    MAX_PARAM_VALUE_CHARS,
    clean_float_text,
    finite_metrics,
    flatten_params,
    format_param,
    is_secret_key,
    metric_name,
)
from locomo_exp.tracking.pending import PendingRun, deferred_mlflow_run
from locomo_exp.tracking.preflight import check_tracking_uri
from locomo_exp.tracking.questions import (
    FLIP_FILTER,
    QuestionLogging,
    evaluations_url,
    find_run,
    log_question_traces,
    run_question_traces,
    tag_flips,
)
from locomo_exp.tracking.run_names import (
    child_run_name,
    model_short_name,
    single_run_name,
    sweep_value_label,
    swept_label,
    swept_tag_name,
)
from locomo_exp.tracking.store import (
    EXPERIMENT_KIND,
    EXPERIMENT_KIND_TAG,
    RUN_ID_ENV,
    RunSpec,
    TrackingStoreError,
    default_artifact_location,
    ensure_experiment,
    ignore_ambient_run_id,
    log_artifacts,
    log_dict,
    log_metrics,
    log_params,
    log_table,
    mlflow_run,
    resolve_tracking_uri,
    set_tags,
    table_columns,
)
from locomo_exp.tracking.sweep_note import sweep_description
from locomo_exp.tracking.ui import mlflow_command, open_ui_hint, redact_uri, ui_base_url, ui_url

__all__ = [
    "FLIP_FILTER",
    "QuestionLogging",
    "evaluations_url",
    "find_run",
    "log_question_traces",
    "run_question_traces",
    "tag_flips",
    "INTERVALS_TABLE",
    "interval_rows",
    "CONFIG_PARAM_KEYS",
    "METRICS_ARTIFACT",
    "NOTE_TAG",
    "RESOLVED_CONFIG_ARTIFACT",
    "card_params",
    "config_measurement_params",
    "headline_metrics",
    "log_dict",
    "resolved_config",
    "run_description",
    "sweep_description",
    "warning_tags",
    "EXPERIMENT_KIND",
    "EXPERIMENT_KIND_TAG",
    "MAX_PARAM_VALUE_CHARS",
    "PERCENT",
    "RUN_ID_ENV",
    "RunSpec",
    "TrackingStoreError",
    "PendingRun",
    "check_tracking_uri",
    "deferred_mlflow_run",
    "child_run_name",
    "child_tags",
    "clean_float_text",
    "config_params",
    "default_artifact_location",
    "ensure_experiment",
    "finite_metrics",
    "flatten_params",
    "format_param",
    "ignore_ambient_run_id",
    "input_params",
    "is_secret_key",
    "joined_ids",
    "judge_metrics",
    "judge_params",
    "judge_tags",
    "log_artifacts",
    "log_metrics",
    "log_params",
    "log_table",
    "metric_name",
    "mlflow_command",
    "mlflow_run",
    "open_ui_hint",
    "redact_uri",
    "model_short_name",
    "parent_metrics",
    "parent_params",
    "parent_tags",
    "pending_batch_tags",
    "resolve_tracking_uri",
    "run_metrics",
    "run_tags",
    "set_tags",
    "single_run_name",
    "sweep_table",
    "sweep_value_label",
    "swept_label",
    "swept_tag_name",
    "table_columns",
    "ui_base_url",
    "ui_url",
]
