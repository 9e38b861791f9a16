"""Every MLflow metric, param, tag and run name the project logs, built in one place.

Pure functions (no MLflow import) from the run summary's JSON layout (``summary.json``)
and the sweep summary's rows. The scoring and judge packages return numbers; only this
module decides what they are called in MLflow and on which scale.

Scales: every score metric is in **percent (0-100)**, as in the report: lexical means
(``f1/*``, ``f1_squad/*``, ``bleu1/*``, 0-1 in ``summary.json``) are multiplied by
:data:`PERCENT`; J (``j/*``) and a stored judge's verdicts (``stored_judge/*``) are 0-100
already; confidence bounds (``*_ci_low``/``*_ci_high``) follow their metric. Counts stay
counts, latencies seconds, costs US dollars.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from locomo_exp.benchmark.locomo import CATEGORY_GROUPS, group_metric_name, overall_group_for
from locomo_exp.results import TrustSummary
from locomo_exp.results.analysis import CONVERSATION, headline_intervals_json
from locomo_exp.tracking.names import (
    MAX_PARAM_VALUE_CHARS,
    finite_metrics,
    flatten_params,
    format_param,
    is_secret_key,
)
from locomo_exp.tracking.run_names import sweep_value_label, swept_tag_name
from locomo_exp.tracking.trust import trust_metrics

PERCENT = 100.0
"""Factor from a 0-1 lexical mean (``summary.json``) to the percent logged to MLflow."""

LEXICAL_CI_METRICS = ("f1",)
"""Bootstrap keys of ``summary["analysis"]`` whose bounds are 0-1 (made percent)."""

QUESTION_CI_PREFIX = "question_ci"
"""Prefix of the question-level bounds when the headline ``*_ci_low``/``*_ci_high`` are the
conversation-cluster ones (``question_ci/f1/overall_low``): in ``metrics.json``, not logged
as MLflow metrics (the headline keeps one interval per value)."""



# ----------------------------------------------------------------------------- one run


OUTPUT_DIR_TAG = "locomo_exp.output_dir"
"""The run directory's absolute path: how ``mode=compare`` finds a run dir's MLflow run."""


def run_tags(*, output_dir: str | None = None) -> dict[str, str]:
    """Tags of every job's run: only what no param or metric holds.

    The run directory (:data:`OUTPUT_DIR_TAG`, how ``mode=compare`` finds the run). The
    package version, scorer, F1 variant and input file are the params ``tool.version``,
    ``scorer.name``, ``f1.variant`` and ``data.file``; repeating them as tags doubled their
    columns in MLflow's runs table (issue 30 §4).

    Args:
        output_dir: the run directory's absolute path, or ``None`` (none tagged).

    Returns:
        ``{"locomo_exp.output_dir": "/abs/run/dir"}`` or ``{}``.
    """
    return {OUTPUT_DIR_TAG: output_dir} if output_dir is not None else {}


NOT_RUN_PARAMS = frozenset({"mode", "compare", "sweep"})
"""Top-level config keys that do not describe a scoring run (``mode=compare``, sweep summary)."""


def config_params(tree: Mapping[str, Any], *, judge_ran: bool) -> dict[str, str]:
    """Params from the resolved config: flattened, secrets left out.

    Args:
        tree: the config as plain nested dicts (``judge``, ``f1``, ``data`` ...).
        judge_ran: whether the job used the judge (``scorer`` is ``judge`` or ``both``).
            Without the judge the ``judge.*`` subtree is not logged, so filtering runs on
            ``params.judge.temperature`` finds only runs that called the judge. The
            :data:`NOT_RUN_PARAMS` subtrees (``mode``, ``compare.*``, ``sweep.*``) are left
            out.

    Returns:
        ``{"data.path": "...", "judge.temperature": "0.5", ...}``.
    """
    kept = {
        key: value
        for key, value in tree.items()
        if (judge_ran or key != "judge") and key not in NOT_RUN_PARAMS
    }
    return flatten_params(kept)


def input_params(*, sha256: str, format_detected: str, f1_version: str) -> dict[str, str]:
    """Params describing what was scored: the input's hash and layout, the F1 semantics."""
    return {
        "data.sha256": sha256,
        "data.format_detected": format_detected,
        "f1.version": f1_version,
    }


def run_metrics(summary: Any, category_names: Mapping[int, str]) -> dict[str, float]:
    """Every metric of one job's run, from its ``summary.json`` content.

    Names: ``<metric>/<group>`` with group ``overall``, ``overall_1_4`` or
    ``cat<id>_<name>`` (``f1/overall``, ``bleu1/cat1_multi_hop``); ``stored_judge/<group>``;
    ``n_questions/<group>``; ``latency/<field>_p50|_p95|_mean`` (seconds);
    ``<metric>/<group>_ci_low|_ci_high`` (``j/...`` for J): the headline interval (the
    conversation-cluster bootstrap when the questions carry conversation ids, with the
    question-level bounds as ``question_ci/<metric>/<group>_low|_high``; else the
    question-level one); ``data/skipped_records``,
    ``data/n_missing_predictions``, ``data/n_excluded_no_gold``; and, when the judge ran,
    :func:`judge_metrics`. Scores are percent (module docstring); ``None``, NaN and inf
    are left out.

    Args:
        summary: ``summary.json`` as a dict, or an object with ``to_json()`` giving it
            (``RunSummary``).
        category_names: display names keyed by category id.

    Returns:
        name -> value, finite values only.
    """
    if not isinstance(summary, Mapping) and hasattr(summary, "to_json"):
        summary = summary.to_json()

    def group(key: str) -> str:
        return group_metric_name(key, dict(category_names))

    flat: dict[str, Any] = {}
    for metric, by_key in (summary.get("metrics") or {}).items():
        for key, agg in by_key.items():
            flat[f"{metric}/{group(key)}"] = _scaled(agg.get("mean"), PERCENT)
    for key, agg in (summary.get("stored_judge") or {}).items():
        flat[f"stored_judge/{group(key)}"] = agg.get("mean")
    for key, count in (summary.get("counts") or {}).items():
        flat[f"n_questions/{group(key)}"] = count
    for name, stats in (summary.get("latency") or {}).items():
        for stat in ("p50", "p95", "mean"):
            flat[f"latency/{name}_{stat}"] = stats.get(stat)
    analysis = summary.get("analysis") or {}
    unit, headline = headline_intervals_json(analysis)
    for metric, by_key in headline.items():
        prefix = "j" if metric == "j_mean" else metric
        scale = PERCENT if metric in LEXICAL_CI_METRICS else 1.0
        for key, interval in by_key.items():
            if interval:
                flat[f"{prefix}/{group(key)}_ci_low"] = _scaled(interval[0], scale)
                flat[f"{prefix}/{group(key)}_ci_high"] = _scaled(interval[1], scale)
    if unit == CONVERSATION:  # the question-level bounds too, under their own name
        for metric, by_key in (analysis.get("bootstrap") or {}).items():
            prefix = "j" if metric == "j_mean" else metric
            scale = PERCENT if metric in LEXICAL_CI_METRICS else 1.0
            for key, interval in by_key.items():
                if interval:
                    name = f"{QUESTION_CI_PREFIX}/{prefix}/{group(key)}"
                    flat[f"{name}_low"] = _scaled(interval[0], scale)
                    flat[f"{name}_high"] = _scaled(interval[1], scale)
    info = summary.get("input") or {}
    flat["data/skipped_records"] = info.get("n_skipped_records", 0)
    flat["data/n_missing_predictions"] = info.get("n_missing_predictions", 0)
    flat["data/n_excluded_no_gold"] = info.get("n_excluded_no_gold", 0)
    judge = summary.get("judge")
    if judge:
        flat.update(judge_metrics(judge, category_names))
    return finite_metrics(flat)


def _scaled(value: Any, factor: float) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return value * factor


def judge_metrics(judge: Mapping[str, Any], category_names: Mapping[int, str]) -> dict[str, float]:
    """Metrics of the judge, from ``summary["judge"]``.

    A dry run gives only ``judge/dry_run_calls``, ``judge/dry_run_input_tokens``,
    ``judge/dry_run_output_tokens`` and ``judge/dry_run_estimated_cost_usd``. Otherwise:
    ``j/overall``, ``j/overall_1_4`` (questions of categories 1-4, pooled), per category
    ``j/cat<id>_<name>``, each with ``_std_across_runs``, ``_pooled_within_std`` and
    ``_count`` (J and its spreads 0-100); ``judge/valid_runs``, ``judge/parse_failures``,
    ``judge/api_errors``, ``judge/no_verdict``, ``judge/prompt_too_long``,
    ``judge/calls_made``, ``judge/cache_hits``, ``judge/input_tokens``,
    ``judge/output_tokens``, ``judge/estimated_cost_usd``; in batch mode
    ``judge/batch_count``, ``judge/batch_requests_submitted`` and ``judge/batch_<result>``.

    Args:
        judge: the judge's summary (``summary.json``'s ``judge`` section).
        category_names: display names by category id (``j/cat1_multi_hop``).

    Returns:
        name -> value, finite values only.
    """
    estimate = judge.get("dry_run_estimate")
    if estimate:
        return finite_metrics(
            {
                "judge/dry_run_calls": estimate.get("calls_to_make"),
                "judge/dry_run_input_tokens": estimate.get("estimated_input_tokens"),
                "judge/dry_run_output_tokens": estimate.get("estimated_output_tokens"),
                "judge/dry_run_estimated_cost_usd": estimate.get("estimated_cost_usd"),
            }
        )
    metrics: dict[str, Any] = {}
    groups = dict(judge.get("j") or {})
    for key, stats in groups.items():
        prefix = f"j/{group_metric_name(key, dict(category_names))}"
        metrics[prefix] = stats.get("mean")
        metrics[f"{prefix}_std_across_runs"] = stats.get("std_across_runs")
        metrics[f"{prefix}_pooled_within_std"] = stats.get("pooled_within_std")
        metrics[f"{prefix}_count"] = stats.get("count")
    metrics["j/overall_1_4"] = j_overall_1_4(judge)
    counts = judge.get("counts") or {}
    for name, key in (
        ("valid_runs", "valid"),
        ("parse_failures", "parse_failure"),
        ("unparsed_scored", "unparsed_scored"),  # a template's on_unparsed: {score: N}
        ("api_errors", "api_error"),
        ("no_verdict", "no_verdict"),
        ("prompt_too_long", "prompt_too_long"),
        ("calls_made", "calls_made"),
        ("cache_hits", "cache_hits"),
    ):
        metrics[f"judge/{name}"] = counts.get(key)
    tokens = judge.get("tokens") or {}
    metrics["judge/input_tokens"] = tokens.get("input")
    metrics["judge/output_tokens"] = tokens.get("output")
    metrics["judge/estimated_cost_usd"] = judge.get("estimated_cost_usd")
    # answers + audit + panel, calls actually paid (the report's and the sweep's cost)
    metrics["judge/total_cost_usd"] = (judge.get("trust") or {}).get(
        "total_cost_usd", judge.get("estimated_cost_usd")
    )
    batch = judge.get("batch")
    if batch:
        metrics["judge/batch_count"] = len(batch.get("batch_ids") or [])
        metrics["judge/batch_requests_submitted"] = batch.get("requests_submitted")
        for kind, value in (batch.get("results") or {}).items():
            metrics[f"judge/batch_{kind}"] = value
    # judge trust (audit, labels, corrected J, panel): summary.json holds the numbers, the
    # names are tracking.trust's
    trust = judge.get("trust")
    if trust:
        metrics.update(trust_metrics(TrustSummary.from_json(trust), category_names))
    return finite_metrics(metrics)


def j_overall_1_4(judge: Mapping[str, Any]) -> float | None:
    """J over the questions of categories 1-4 (0-100), pooled like ``j/overall``.

    When the judge judged exactly categories 1-4 (the default), that is its ``overall``
    mean. Otherwise it is the question-weighted mean of the per-category means
    (sum of mean x count over categories 1-4 / sum of counts), which equals the mean over
    those questions; ``None`` when a category of 1-4 was not judged.

    Args:
        judge: the judge's summary (``j`` per category key and ``overall``; ``categories``).

    Returns:
        J overall_1_4, or ``None``.
    """
    groups = judge.get("j") or {}
    members = CATEGORY_GROUPS["overall_1_4"]
    if overall_group_for(judge.get("categories") or []) == "overall_1_4":
        mean = (groups.get("overall") or {}).get("mean")
        return float(mean) if isinstance(mean, (int, float)) else None
    parts = [groups.get(str(c)) or {} for c in members]
    if any(not isinstance(p.get("mean"), (int, float)) or not p.get("count") for p in parts):
        return None
    total = sum(int(p["count"]) for p in parts)
    return sum(float(p["mean"]) * int(p["count"]) for p in parts) / total


def judge_params(judge: Mapping[str, Any]) -> dict[str, str]:
    """Params the judge's run adds: prompt, API and parser versions; batch ids in batch mode.

    Also where the calls went (``judge.endpoint``, ``judge.endpoint_kind``: default or
    custom; never a key) and the snapshot the API answered with (``judge.model_snapshot``),
    when the summary has them.
    """
    params = {
        "judge.prompt_version": str(judge.get("prompt_version")),
        "judge.api_version": str(judge.get("api_version")),
        "judge.parser_version": str(judge.get("parser_version")),
    }
    for name in ("endpoint", "endpoint_kind", "model_snapshot"):
        if judge.get(name):
            params[f"judge.{name}"] = str(judge[name])
    template = judge.get("template")
    if isinstance(template, Mapping):  # judge.protocol=template: the file's name and sha256
        params["judge.template_name"] = f"{template.get('name')}@{template.get('version')}"
        params["judge.template_sha256"] = str(template.get("sha256"))
    batch = judge.get("batch")
    if batch is not None:
        params["judge.batch_ids"] = joined_ids(batch.get("batch_ids") or [])
    return params


def judge_tags(judge: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, str]:
    """Tags the judge's run adds: only states no param or metric holds.

    ``judge.dry_run`` (``true``) for a dry run; ``judge.audit_gate`` (``passed``,
    ``failed``, ``not set`` or ``not measured``) when the audit ran. The judge's mode and
    batch ids are the params ``judge.mode`` and ``judge.batch_ids``
    (:func:`config_params`, :func:`judge_params`), not repeated as tags (issue 30 §4).
    """
    tags: dict[str, str] = {}
    if dry_run:
        tags["judge.dry_run"] = "true"
    trust = judge.get("trust")
    audit = TrustSummary.from_json(trust).audit if trust else None
    if audit is not None:  # the state the trust job measured: passed, failed, not set...
        tags["judge.audit_gate"] = audit.gate.state
    return tags


def pending_batch_tags(batch_ids: Iterable[str]) -> dict[str, str]:
    """Tags of a run whose judge batches are still processing (``judge.batch.wait=false``).

    ``judge.batch_status`` (``pending``) and the batch ids (the run logs no judge param
    past its config's, so they are not yet the ``judge.batch_ids`` param); the mode is the
    config's param ``judge.mode``.
    """
    return {
        "judge.batch_status": "pending",
        "judge.batch_ids": joined_ids(list(batch_ids)),
    }


def joined_ids(ids: list[str]) -> str:
    """Comma-joined ids within :data:`~locomo_exp.tracking.names.MAX_PARAM_VALUE_CHARS`.

    Too many ids are cut after a whole id and end with ``,... (+N more; see summary.json)``.
    """
    text = ",".join(ids)
    if len(text) <= MAX_PARAM_VALUE_CHARS:
        return text
    kept: list[str] = []
    for index, batch_id in enumerate(ids):
        suffix = f",... (+{len(ids) - index} more; see summary.json)"
        if len(",".join([*kept, batch_id])) + len(suffix) > MAX_PARAM_VALUE_CHARS:
            return ",".join(kept) + suffix
        kept.append(batch_id)
    return text  # pragma: no cover - unreachable


# ----------------------------------------------------------------------------- sweeps

def child_tags(job_num: int, sweep_name: str | None, swept: Mapping[str, str]) -> dict[str, str]:
    """Tags of a sweep job's run: role, job number, sweep name, one tag per swept key."""
    return {
        "sweep.role": "child",
        "sweep.job_num": str(job_num),
        **({"sweep.name": sweep_name} if sweep_name is not None else {}),
        **{swept_tag_name(key): value for key, value in swept.items()},
    }


def parent_tags(
    *,
    version: str,
    swept_keys: list[str],
    swept_overrides: list[str],
    fixed_overrides: list[str],
    sweep_dir: str,
    launcher: str,
    n_jobs: int | None,
) -> dict[str, str]:
    """Tags of a sweep's parent run (fixed overrides naming a secret are left out)."""
    fixed = [o for o in fixed_overrides if not is_secret_key(o.split("=", 1)[0])]
    return {
        "locomo_exp.version": version,
        "sweep.role": "parent",
        "sweep.keys": ", ".join(swept_keys),
        "sweep.overrides": " ".join(swept_overrides)[:5000],
        "sweep.fixed_overrides": " ".join(fixed)[:5000],
        "sweep.dir": sweep_dir,
        "sweep.launcher": launcher.rsplit(".", 1)[-1],
        "sweep.n_jobs": str(n_jobs) if n_jobs is not None else "unknown",
    }


def parent_params(values_by_key: Mapping[str, list[str]]) -> dict[str, str]:
    """Params of a sweep's parent run: each swept key with its values in job order.

    Args:
        values_by_key: swept key -> display values (``{"judge.temperature": ["0.0",
            "0.5"]}``); repeated values are shown once.

    Returns:
        ``{"judge.temperature": "0.0, 0.5"}``; secret-looking keys are left out.
    """
    return {
        swept_tag_name(key): format_param(list(dict.fromkeys(values)))[1:-1]
        for key, values in values_by_key.items()
        if not is_secret_key(key)
    }


PARENT_HEADLINES = (
    ("f1_overall", "F1 overall, percent"),
    ("j_overall", "J overall, 0-100"),
    ("j_std_across_runs", "std of J overall across runs, 0-100"),
    ("estimated_cost_usd", "judge cost, USD"),
)
"""Headline metrics logged on a sweep's parent run for every completed job."""


def sweep_headlines(row: Mapping[str, Any]) -> dict[str, float | None]:
    """A sweep summary row's headline numbers (:data:`PARENT_HEADLINES`), F1 in percent.

    A benchmark plug-in's row carries ``headlines``: its run log's headline figures
    (:mod:`locomo_exp.sweep.log_rows`; metric name -> number, in the units its own run logs
    them, named by the plug-in), added as they are.
    """
    f1 = (row.get("f1") or {}).get("overall")
    out: dict[str, float | None] = {
        "f1_overall": _scaled(f1, PERCENT),
        "j_overall": row.get("j_overall"),
        "j_std_across_runs": row.get("j_std_across_runs"),
        "estimated_cost_usd": row.get("estimated_cost_usd"),
    }
    out.update(row.get("headlines") or {})  # a plug-in job's, from its run log
    return out


def parent_metrics(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Per swept value, the headline metrics of its job, for the sweep's parent run.

    Args:
        rows: the sweep summary's rows (``sweep_summary.json``); failed and pending jobs
            are left out, except the cost of a job that failed after paying (``paid``).

    Returns:
        ``{"sweep/T:0.5/f1_overall": 61.2, "sweep/T:0.5/j_overall": 70.0, ...}``
        (F1 and J percent; cost USD), finite values only.
    """
    metrics: dict[str, Any] = {}
    for row in rows:
        label = sweep_value_label(row.get("swept") or {})
        if row.get("status") != "COMPLETED":
            if row.get("paid"):  # a job that failed after paying: what it cost
                metrics[f"sweep/{label}/estimated_cost_usd"] = row.get("estimated_cost_usd")
            continue
        for name, value in sweep_headlines(row).items():
            metrics[f"sweep/{label}/{name}"] = value
    return finite_metrics(metrics)


def sweep_table(rows: Iterable[Mapping[str, Any]], swept_keys: list[str]) -> list[dict[str, Any]]:
    """The sweep summary as table rows for ``mlflow.log_table`` (one row per job).

    Columns: ``job``, one per swept key, ``status`` (with the job's judge-check
    warnings' heads: ``COMPLETED — WARNING: J inflated``), ``run_name``, the headlines of
    :data:`PARENT_HEADLINES` (F1 percent), ``parse_failures``, ``api_errors``,
    ``input_tokens``, ``output_tokens``, ``wall_time_s`` (seconds), ``error``.
    """
    table = []
    for row in rows:
        swept = row.get("swept") or {}
        table.append(
            {
                "job": row.get("job"),
                **{key: swept.get(key) for key in swept_keys},
                "status": row.get("run_status") or row.get("status"),
                "run_name": row.get("run_name"),
                **sweep_headlines(row),
                **{
                    key: row.get(key)
                    for key in (
                        "parse_failures",
                        "api_errors",
                        "input_tokens",
                        "output_tokens",
                        "wall_time_s",
                        "error",
                    )
                },
            }
        )
    return table
