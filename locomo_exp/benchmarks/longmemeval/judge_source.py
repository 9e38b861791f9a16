"""What a LongMemEval run records of its stored verdicts' judge, and its ``scales`` map."""

from __future__ import annotations

from typing import Any

from locomo_exp.results.scales import PERCENT, SHARE

LME_SCALES: dict[str, str] = {
    "figures": SHARE,
    "rates": SHARE,
    "j_mean": PERCENT,
}
"""The ``scales`` map of a LongMemEval run: ``figures`` (every accuracy and interval bound of
``stored``, ``judge``, ``headline`` and ``panel``), ``rates`` (the audit's, the labels' and
agreement shares) on 0-1; ``j_mean`` (``scores.jsonl``, when this project's judge ran) on
0-100, as LoCoMo's."""


LME_STORED_FIELD = "autoeval_label"
"""The field of LongMemEval's ``.eval-results-<model>`` rows that holds the stored verdict."""


def lme_stored_judge_source(models: list[str]) -> dict[str, Any]:
    """What is known of the judge behind an ``.eval-results`` file's stored verdicts.

    The same layout as LoCoMo's (:func:`locomo_exp.data.judge_source.stored_judge_source`):
    each row names its judge model (``autoeval_label.model``); the protocol is not recorded
    in the file -- ``evaluate_qa.py`` writes these rows with LongMemEval's per-type yes/no
    prompts (docs/field_notes.md §11).

    Args:
        models: the judge models the rows name (``["unnamed"]`` when rows name none).

    Returns:
        ``{"field", "model", "stated_in", "per_source", "text"}``.
    """
    named = [m for m in models if m != "unnamed"]
    model = ", ".join(named) or None
    protocol = (
        "LongMemEval's evaluate_qa.py yes/no prompt per question type, per LongMemEval's "
        "scorer, which writes this layout; not recorded in the file"
    )
    text = (
        f"{model} (named by each row's `{LME_STORED_FIELD}.model`); protocol: {protocol}"
        if model
        else f"not recorded in the file; protocol: {protocol}"
    )
    return {
        "field": f"{LME_STORED_FIELD}.label",
        "model": model,
        "stated_in": f"{LME_STORED_FIELD}.model" if model else None,
        "per_source": protocol,
        "text": text,
    }


__all__ = ["LME_SCALES", "LME_STORED_FIELD", "lme_stored_judge_source"]
