"""What MLflow's pages show first: the measurement's params, the headline metrics, the note.

MLflow's compare page lines runs up by params and metrics, and opens its plots on the first
of each. A run logged with every flattened config key (about 90) and every metric (over 250
with the judge's audit) buries the two numbers a sweep is about. So (issue 20 §3):

* params are the settings that define the measurement -- the disclosure card's fields
  (:data:`CONFIG_PARAM_KEYS` from the config, :func:`card_params` from ``card.json``) plus
  the keys a sweep varies; the full resolved config is an artifact
  (:func:`resolved_config`);
* metrics logged to MLflow are the headline (:func:`headline_metrics`: F1 and J overall and
  per category, the 95% intervals of the overall groups, stored J, the audit's pooled
  rates, the judge's error counts and cost) -- at most 60 with every part on
  (``tests/tracking/test_mlflow_headline_budget.py``); every metric stays in the ``metrics.json``
  artifact, and every interval in the ``intervals_table.json`` table
  (:func:`~locomo_exp.tracking.intervals.interval_rows`);
* the run's description (``mlflow.note.content``) says the result in a few lines
  (:func:`run_description`).

Pure functions (no MLflow import).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from locomo_exp.results.checks_read import status_with_warnings
from locomo_exp.tracking.names import (
    MAX_PARAM_VALUE_CHARS,
    flatten_params,
    format_param,
    is_secret_key,
)

NOTE_TAG = "mlflow.note.content"
"""The tag MLflow's run page shows as the run's description (markdown)."""

METRICS_ARTIFACT = "metrics.json"
"""Every metric of a run (name -> value), beside the headline logged as MLflow metrics."""

RESOLVED_CONFIG_ARTIFACT = "config_resolved.json"
"""The full resolved config (secrets left out), beside the params that define the measurement."""

CONFIG_PARAM_KEYS: tuple[str, ...] = (
    "benchmark",
    "scorer.name",
    "f1.variant",
    "f1.bleu1",
    "data.path",
    "data.runs",
    "data.format",
    "data.setting",
    "data.limit",
    "data.seed",
    "data.errata",
    "judge.provider",
    "judge.model",
    "judge.protocol",
    "judge.template",
    "judge.temperature",
    "judge.runs",
    "judge.max_tokens",
    "judge.categories",
    "judge.mode",
    "judge.audit.n",
    "judge.labels",
    "judge.panel",
)
"""Config keys logged as params when the config has them (``judge.*`` only when the judge
ran): the choices that change what is measured, not how fast or where it is stored."""

JUDGE_CARD_FIELDS = (
    "model_snapshot",
    "prompt_version",
    "prompt_hash",
    "parser_version",
    "aggregation",
)
"""Fields of the card's ``judge`` section logged as ``judge.<field>`` params."""

UNSET = frozenset({"null", "[]", "{}"})
"""Param values of an option left unset (``data.limit``, ``judge.panel``): not logged, so the
params table holds only what shaped the measurement (a swept key is logged whatever its value)."""

_HEADLINE_PATTERNS = (
    r"(f1|j)/(overall|overall_1_4|cat\d+_[a-z0-9_]+(?<!_ci_low)(?<!_ci_high))",
    # intervals of the overall groups only; per category: intervals_table.json, metrics.json
    r"(f1|j)/(overall|overall_1_4)(_ci_low|_ci_high)",
    # every lexical metric's overall (LEXICAL_SPECS: f1_<variant>, bleu1): the same name
    # means the same F1 whatever the reported variant (f1_mem0/overall: Mem0's harness)
    r"(f1_[a-z0-9_]+|bleu1)/overall",
    r"j/overall_std_across_runs",
    r"stored_judge/[^/]+",
    r"n_questions/overall",
    r"data/[^/]+",
    r"judge/(api_errors|parse_failures|calls_made|estimated_cost_usd|total_cost_usd)",
    r"judge/dry_run_[a-z_]+",
    r"audit/(false_accept_rate|false_reject_rate)(_ci_low|_ci_high)?",
    r"audit/gate_passed",
    r"j_corrected/overall(_ci_low|_ci_high)?",
    r"labels/overall/(kappa|agreement)",
    r"panel/(j|alpha)",
    r"latency/(search|total)_latency_s_mean",
)
_HEADLINE = re.compile("^(?:" + "|".join(_HEADLINE_PATTERNS) + ")$")
_SPREADS = ("_std_across_runs", "_pooled_within_std", "_count")
"""Suffixes of per-group spreads and counts: in ``metrics.json``, except J overall's spread."""

FIRST_METRICS = (
    "j/overall",
    "stored_judge/overall",
    "f1/overall",
    "j/overall_ci_low",
    "j/overall_ci_high",
    "f1/overall_ci_low",
    "f1/overall_ci_high",
)
"""Logged first, in this order: what the compare page's plot and a reader look at first."""

MAX_HEADLINE_METRICS = 60
"""Issue 20 §3's budget: a run with every part on logs at most this many headline metrics
(``tests/tracking/test_mlflow_headline_budget.py`` builds that run: 60)."""


def headline_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    """The metrics logged to MLflow: the headline of a run, at most :data:`MAX_HEADLINE_METRICS`.

    Kept: the reported F1 and J per group (``f1/<group>``, ``j/<group>``), with
    ``_ci_low``/``_ci_high`` for ``overall`` and ``overall_1_4``, every F1 variant's and
    BLEU-1's overall (``f1_mem0/overall``, ``bleu1/overall``), the spread of J overall
    across runs, stored J per group, ``n_questions/overall``, ``data/*`` counts, the
    judge's API errors, parse failures, calls, cost and total cost (answers + audit +
    panel; or a dry run's estimate), the audit's pooled false-accept and false-reject
    rates with intervals and its gate, corrected J overall, agreement with labels
    overall, the panel's J and alpha, and mean latencies (seconds). Everything else
    (per-category interval bounds, other F1 variants and BLEU-1 per group, per-kind
    audit rates, panel pairs, spreads per category) stays in :data:`METRICS_ARTIFACT`;
    the intervals are also a table (:mod:`locomo_exp.tracking.intervals`).

    MLflow's compare page opens its parallel-coordinates plot on the first metric the
    runs share, in the order logged: so the headline comes first (:data:`FIRST_METRICS`).

    Args:
        metrics: every metric of the run (``tracking.run_metrics``).

    Returns:
        The kept subset: :data:`FIRST_METRICS` that are present, then the rest in the order
        given.
    """
    kept = {
        name: value
        for name, value in metrics.items()
        if _HEADLINE.match(name)
        and (name == "j/overall_std_across_runs" or not name.endswith(_SPREADS))
    }
    first = {name: kept[name] for name in FIRST_METRICS if name in kept}
    return first | {name: value for name, value in kept.items() if name not in first}


def config_measurement_params(
    tree: Mapping[str, Any], *, judge_ran: bool, swept_keys: Iterable[str] = ()
) -> dict[str, str]:
    """Params from the config: :data:`CONFIG_PARAM_KEYS` present in it, and swept keys.

    Args:
        tree: the resolved config as nested dicts.
        judge_ran: without the judge, ``judge.*`` keys are left out (so filtering on
            ``params.judge.temperature`` finds only runs that called the judge).
        swept_keys: keys a sweep varies (``judge.temperature``, ``+judge.x``), logged even
            when they are not in :data:`CONFIG_PARAM_KEYS`, so the compare page can plot
            metrics against them.

    Returns:
        ``{"scorer.name": "both", "judge.temperature": "0.5", ...}`` (secrets never; options
        left unset -- ``null``, ``[]`` -- not logged unless swept).
    """
    flat = flatten_params(dict(tree))
    swept = {key.lstrip("+~") for key in swept_keys}
    wanted = list(CONFIG_PARAM_KEYS) + [key.lstrip("+~") for key in swept_keys]
    params: dict[str, str] = {}
    for key in wanted:
        if key.startswith("judge.") and not judge_ran and key not in swept:
            continue
        if key in flat and not is_secret_key(key):
            if flat[key] not in UNSET or key in swept:
                params[key] = flat[key]
        elif key not in flat:
            prefix = key + "."
            params.update((k, v) for k, v in flat.items() if k.startswith(prefix))
    return params


def card_params(card: Mapping[str, Any]) -> dict[str, str]:
    """Params from a run's ``card.json``: what was measured, as the card states it.

    Returns:
        ``data.file``, ``data.sha256``, ``data.format_detected``, ``question_set``,
        ``category_5_policy``, ``f1.version``, ``bleu1.version``, ``answer_key`` (and
        ``answer_key.errata_sha256``), ``stored_judge`` (with ``stored_judge.field`` and
        ``stored_judge.judge``: what is known of that judge), ``tool.version``,
        ``tool.git_commit``, ``dataset_reference_sha256``, and with a judge
        ``judge.model_snapshot``, ``judge.prompt_version``, ``judge.prompt_hash``,
        ``judge.parser_version``, ``judge.aggregation``; values that are unknown are left
        out.
    """
    inp = card.get("input") or {}
    tool = card.get("tool") or {}
    key = card.get("answer_key") or {}
    judge = card.get("judge") or {}
    values: dict[str, Any] = {
        "data.file": inp.get("name"),
        "data.sha256": inp.get("sha256"),
        "data.format_detected": inp.get("format"),
        "question_set": card.get("question_set"),
        "category_5_policy": card.get("category_5_policy"),
        "f1.version": (card.get("f1") or {}).get("version"),
        "bleu1.version": (card.get("bleu1") or {}).get("version"),
        "answer_key": key.get("version"),
        "answer_key.errata_sha256": key.get("errata_sha256"),
        "stored_judge": card.get("stored_judge"),
        "stored_judge.field": (card.get("stored_judge_source") or {}).get("field"),
        "stored_judge.judge": (card.get("stored_judge_source") or {}).get("text"),
        "tool.version": tool.get("version"),
        "tool.git_commit": tool.get("git_commit"),
        "dataset_reference_sha256": card.get("dataset_reference_sha256"),
    }
    for name in JUDGE_CARD_FIELDS:
        values[f"judge.{name}"] = judge.get(name)
    return {k: format_param(v) for k, v in values.items() if v is not None}


def resolved_config(tree: Any) -> Any:
    """The resolved config with every secret-looking key left out (for the artifact)."""
    if isinstance(tree, Mapping):
        return {k: resolved_config(v) for k, v in tree.items() if not is_secret_key(str(k))}
    if isinstance(tree, list):
        return [resolved_config(v) for v in tree]
    return tree


def interval_text(metrics: Mapping[str, float], name: str) -> str:
    """`` [low, high]`` from ``<name>_ci_low``/``_ci_high`` (2 decimals), or ``""``."""
    low, high = metrics.get(f"{name}_ci_low"), metrics.get(f"{name}_ci_high")
    return "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"


def interval_words(intervals: Mapping[str, Any] | None) -> str:
    """What the headline intervals are, in a few words (``summary.json`` ``analysis.intervals``).

    Returns:
        ``"95% conversation-cluster bootstrap intervals (10 conversations, 1000 resamples,
        seed 0)"``, or ``"95% bootstrap intervals over questions only (<why>)"``; without
        ``intervals`` (an older summary), ``"95% bootstrap intervals over questions"``.
    """
    intervals = intervals or {}
    if intervals.get("headline") == "conversation":
        conv = intervals.get("conversation") or {}
        n = (conv.get("clusters") or {}).get("overall")
        return (
            f"95% conversation-cluster bootstrap intervals ({n} conversations, "
            f"{conv.get('resamples')} resamples, seed {conv.get('seed')})"
        )
    if intervals.get("note"):
        return f"95% bootstrap intervals over questions only ({intervals['note']})"
    return "95% bootstrap intervals over questions"


def run_description(
    metrics: Mapping[str, float],
    card: Mapping[str, Any],
    status: Mapping[str, str],
    intervals: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
) -> str:
    """The run page's description: the result in a few markdown lines.

    Args:
        metrics: the run's metrics (percent).
        card: the run's ``card.json``.
        status: ``summary["status"]`` (``{"f1": "ok", "judge": "ok"}``).
        intervals: ``summary["analysis"]["intervals"]``: which interval the bounds are
            (:func:`interval_words`).
        warnings: the run's judge-check warnings (J inflated, ...): they open the
            description (:func:`warning_lead`), as they open the report, since MLflow
            shows such a run as "Finished".

    Returns:
        Lines such as ``**J 80.00** [72.50, 87.50] · F1 (locomo) 61.20 [...] (0-100; 95%
        conversation-cluster bootstrap intervals (10 conversations, ...))``, then the
        question set and input, the judge, and the status; a measure that was not
        computed reads "not measured".
    """
    f1 = card.get("f1") or {}
    j = metrics.get("j/overall")
    stored = metrics.get("stored_judge/overall")
    if j is not None:
        j_text = f"**J {j:.2f}**{interval_text(metrics, 'j/overall')}"
    elif stored is not None:
        source = card.get("stored_judge_source") or {}
        j_text = (
            f"**stored J {stored:.2f}** (the file's own verdicts from `{source.get('field')}`, "
            f"judge: {source.get('text') or 'unknown'}; no judge ran)"
        )
    elif (card.get("judge") or {}).get("dry_run"):
        j_text = "J not measured (judge dry run: no judge call was made)"
    else:
        j_text = "J not measured (no judge ran)"
    f1_value = metrics.get("f1/overall")
    f1_text = (
        f"**F1 ({f1.get('variant')}) {f1_value:.2f}**{interval_text(metrics, 'f1/overall')}"
        if f1_value is not None
        else "F1 not measured"
    )
    inp = card.get("input") or {}
    lines = [
        *warning_lead(warnings),
        f"{j_text} · {f1_text} (0-100; {interval_words(intervals)})",
        "",
        f"Questions: {card.get('question_set')} ({metrics.get('n_questions/overall', 0):.0f} "
        f"scored) from `{inp.get('name')}` (format {inp.get('format')})",
    ]
    lines += description_tail(
        card, status, "Everything measured: `report.html` (Artifacts); all metrics: `metrics.json`."
    )
    return "\n".join(lines)


def warning_lead(warnings: Sequence[str]) -> list[str]:
    """The first lines of a run's description when its judge checks flagged its J.

    MLflow marks every run that ended as "Finished" (green); the description's first line
    is what its run page shows before "Show more", so the warning goes there.

    Args:
        warnings: the run's judge-check warnings (full text).

    Returns:
        ``["**⚠ Run status: WARNING — J inflated (...)**", ""]``; ``[]`` without warnings.
    """
    if not warnings:
        return []
    return ["**⚠ Run status: WARNING — " + "; ".join(warnings) + "**", ""]


def warning_tags(warnings: Sequence[str]) -> dict[str, str]:
    """Tags of a run whose judge checks flagged its J (none otherwise).

    Returns:
        ``{"run.status": "WARNING: J inflated", "run.warnings": <full text, cut to the
        tag limit>}`` so a run list can be filtered on ``tags.`run.status```.
    """
    if not warnings:
        return {}
    return {
        "run.status": status_with_warnings("", list(warnings)).removeprefix(" — "),
        "run.warnings": "; ".join(warnings)[:MAX_PARAM_VALUE_CHARS],
    }


def description_tail(card: Mapping[str, Any], status: Mapping[str, Any], where: str) -> list[str]:
    """The closing lines of a run's description: the judge, provenance, status, where to look.

    Shared by LoCoMo's :func:`run_description` and the benchmark plug-ins' own run
    descriptions (each in its package's ``tracking`` module).

    Args:
        card: the run's ``card.json`` (``judge``, ``tool``, ``command_line``).
        status: ``summary["status"]``.
        where: the last line (which artifact holds everything).

    Returns:
        Markdown lines, each block after an empty line.
    """
    lines: list[str] = []
    judge = card.get("judge")
    if judge:
        lines += [
            "",
            ("Judge (dry run: not run): " if judge.get("dry_run") else "Judge: ")
            + f"{judge.get('model')} ({judge.get('protocol')}, temperature "
            f"{judge.get('temperature')}, {judge.get('runs')} run(s), prompt "
            f"{judge.get('prompt_version')})",
        ]
    tool = card.get("tool") or {}
    if tool:
        commit = tool.get("git_commit")
        lines += [
            "",
            f"Tool: {tool.get('name')} {tool.get('version') or 'unknown'}"
            + (f" (git {commit[:12]})" if commit else "")
            + f" · command: `{card.get('command_line') or 'unknown'}`",
        ]
    lines += ["", "Status: " + (", ".join(f"{k} {v}" for k, v in status.items()) or "unknown")]
    lines += ["", where]
    return lines


__all__ = [
    "CONFIG_PARAM_KEYS",
    "MAX_HEADLINE_METRICS",
    "METRICS_ARTIFACT",
    "NOTE_TAG",
    "RESOLVED_CONFIG_ARTIFACT",
    "card_params",
    "config_measurement_params",
    "headline_metrics",
    "resolved_config",
    "description_tail",
    "interval_text",
    "run_description",
    "warning_lead",
    "warning_tags",
]
