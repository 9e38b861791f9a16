"""Disclosure card: how a run was measured (issue 13, part 2).

:func:`build_card` turns a run's ``config.yaml`` (as a dict) and ``summary.json`` into the
``card.json`` dict; :func:`render_card_markdown` renders the "How this was measured"
block for the top of ``report.md``; :func:`card_mismatches` lists the differences that
make two runs incomparable (F1 variant, question set, answer key) and
:func:`card_differences` every field that differs (shown above comparison tables).

Unknown values stay ``None`` ("unknown"), never guessed.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import CATEGORY_IDS, question_set_name
from locomo_exp.data.input_file import file_sha256
from locomo_exp.report.judge_match import judge_field_difference
from locomo_exp.report.provenance import (
    git_commit,
    provenance,
    provenance_lines,
    tool_version,
)
from locomo_exp.results.template_note import template_note
from locomo_exp.results.words import counted

logger = logging.getLogger(__name__)



# card field -> what kind of mismatch refuses a comparison
BLOCKING_FIELDS = ("f1.variant", "question_set", "answer_key")


def question_set_label(counts: Mapping[str, Any]) -> str:
    """Name the question set from a summary's per-category counts.

    Args:
        counts: ``summary["counts"]``: ``"1"``..``"5"`` -> number of questions.

    Returns:
        ``"1,540"`` (categories 1-4), ``"1,542"`` (1-4 plus the two category-5 items that
        carry an ``answer``), ``"1,986"`` (all), or ``"custom (N)"``.
    """
    per_category = {c: int(counts.get(str(c)) or 0) for c in CATEGORY_IDS}
    name = question_set_name(per_category)
    return f"{int(name):,}" if name else f"custom ({sum(per_category.values()):,})"


def _category5_policy(counts: Mapping[str, Any], judge: Mapping[str, Any] | None) -> str:
    n5 = int(counts.get("5") or 0)
    text = (
        "none in the input"
        if n5 == 0
        else f"included ({counted(n5, 'question')}, LoCoMo's adversarial rule for F1)"
    )
    if judge is not None and n5:
        judged = judge.get("categories")
        if judged is not None and 5 not in [int(c) for c in judged]:
            text += "; not judged (J over categories " + ", ".join(str(c) for c in judged) + ")"
    return text


def _answer_key(config: Mapping[str, Any], input_info: Mapping[str, Any]) -> dict[str, Any]:
    data = config.get("data") or {}
    errata = data.get("errata")
    question_set = (input_info.get("question_set") or {}).get("name")
    if not errata:
        key: dict[str, Any] = {"version": "original", "errata_path": None, "errata_sha256": None}
        if question_set == "custom":  # not LoCoMo's questions: its golds are the file's own
            key["locomo"] = False
        return key
    path = Path(str(errata))
    sha = file_sha256(path) if path.is_file() else None
    # the headline numbers stay on the original key; the lexical metrics are scored against
    # the corrected key beside it; J never is (the judge sees the original gold)
    scorer = str((config.get("scorer") or {}).get("name") or "")
    return {
        "version": "original",
        "errata_path": str(errata),
        "errata_sha256": sha,
        "corrected_scored_beside": scorer != "judge",
    }


def _judge_section(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    judge = summary.get("judge")
    if not judge:
        return None
    dry_run = (  # judge.dry_run=true: the settings a real run would use, no call made
        {"dry_run": True, "ran": False} if judge.get("dry_run_estimate") is not None else {}
    )
    # the judge's checks (J inflated / deflated), as summary.json's status carries them
    warnings = list((judge.get("trust") or {}).get("warnings") or ())
    return {
        **dry_run,
        "model": judge.get("model"),
        "model_snapshot": judge.get("model_snapshot") or judge.get("response_model"),
        **_provider_fields(judge),
        "protocol": judge.get("protocol"),
        "prompt_version": judge.get("prompt_version"),
        "prompt_hash": judge.get("prompt_hash"),
        "parser_version": judge.get("parser_version"),
        "temperature": judge.get("temperature"),
        "runs": judge.get("runs"),
        "aggregation": judge.get("aggregation") or "mean over runs",
        "categories": judge.get("categories"),
        **_template_fields(judge),
        **({"warnings": warnings} if warnings else {}),
    }


def _provider_fields(judge: Mapping[str, Any]) -> dict[str, Any]:
    """Provider and endpoint of the judge (absent in summaries made before providers)."""
    if not judge.get("provider"):
        return {}
    return {
        "provider": judge.get("provider"),
        "endpoint": judge.get("endpoint"),
        "endpoint_kind": judge.get("endpoint_kind"),
    }


def _template_fields(judge: Mapping[str, Any]) -> dict[str, Any]:
    """The template of a ``judge.protocol=template`` run (absent for other protocols)."""
    template = judge.get("template")
    if not isinstance(template, Mapping):
        return {}
    return {"template_sha256": template.get("sha256"), "template": dict(template)}


def build_card(
    config: Mapping[str, Any],
    summary: Mapping[str, Any],
    *,
    argv: Sequence[str] | None = None,
    now: _dt.datetime | None = None,
    package_dir: Path | None = None,
) -> dict[str, Any]:
    """Build the ``card.json`` dict of a run.

    Args:
        config: the run's resolved config (``config.yaml`` loaded as a plain dict).
        summary: the run's ``summary.json``.
        argv: the command line (default ``sys.argv``).
        now: the date to record (default: now, UTC).
        package_dir: where to ask git for the commit (default: this package's dir).

    Returns:
        A JSON-ready dict: ``card_version``, ``tool`` (name, version, git_commit),
        ``command_line``, ``date`` (ISO 8601), ``scales`` (metric -> ``"0-1"`` or ``"0-100"``,
        from the summary), ``input`` (path, name, sha256, format),
        ``dataset_reference_sha256``, ``question_set``, ``counts``,
        ``category_5_policy``, ``f1`` (variant, version) or ``None``, ``bleu1``
        (version) or ``None``, ``judge`` (model, snapshot, protocol, prompt and parser
        versions, temperature, runs, aggregation) or ``None`` (then ``judge_status``, the
        status of a judge that did not finish, if one ran), ``stored_judge`` (bool),
        ``stored_judge_source`` (the field read and what is known of that judge) or ``None``,
        ``answer_key`` (``original`` or ``errata`` with the file's sha256).
    """
    versions = summary.get("versions") or {}
    input_info = summary.get("input") or {}
    counts = summary.get("counts") or {}
    f1_cfg = config.get("f1") or {}
    metrics = summary.get("metrics") or {}
    data_cfg = config.get("data") or {}
    f1 = None
    if any(name.startswith("f1") for name in metrics):
        variant = f1_cfg.get("variant")
        f1 = {"variant": variant, "version": versions.get(f"f1_{variant}") if variant else None}
    judge = _judge_section(summary)
    status = (summary.get("status") or {}).get("judge")
    return {
        **provenance(argv=argv, now=now, package_dir=package_dir),
        "scales": dict(summary.get("scales") or {}),
        "input": {
            "path": input_info.get("path"),
            "name": input_info.get("name"),
            "sha256": input_info.get("sha256"),
            "format": input_info.get("format"),
            **(
                {"question_set": input_info["question_set"]}
                if input_info.get("question_set")
                else {}
            ),
        },
        "dataset_reference_sha256": (summary.get("reference") or {}).get("sha256")
        or ((summary.get("input") or {}).get("reference") or {}).get("sha256")
        or data_cfg.get("reference_sha256"),
        "question_set": question_set_label(counts),
        "counts": {k: counts.get(k) for k in ("1", "2", "3", "4", "5")},
        "category_5_policy": _category5_policy(counts, summary.get("judge")),
        "f1": f1,
        "bleu1": {"version": versions["bleu1"]} if "bleu1" in versions else None,
        "judge": judge,
        **({"judge_status": status} if judge is None and status else {}),  # did not finish
        "stored_judge": bool(summary.get("stored_judge")),
        "stored_judge_source": input_info.get("stored_judge_source")
        if summary.get("stored_judge")
        else None,
        "answer_key": _answer_key(config, input_info),
        "sample": input_info.get("subset"),
    }


def stored_judge_line(source: Mapping[str, Any] | None) -> str:
    """The "Stored J" line of "How this was measured": the field read and the judge known.

    Args:
        source: the card's ``stored_judge_source``
            (:func:`locomo_exp.data.judge_source.stored_judge_source`), or ``None`` (a card
            written before it was recorded).

    Returns:
        ``- Stored J: verdicts another judge stored in the input file, read from `llm_score`;
        judge: gpt-4o-mini, ... per the Mem0 evaluation harness ...; not recorded in the file``.
    """
    if not source:
        return "- Stored J: verdicts another judge stored in the input file; judge: unknown"
    return (
        f"- Stored J: verdicts another judge stored in the input file, read from "
        f"`{source.get('field')}`; judge: {source.get('text')}"
    )


def _fmt(value: Any) -> str:
    return "unknown" if value is None else str(value)


def render_card_markdown(card: Mapping[str, Any]) -> str:
    """The "How this was measured" markdown block of a card.

    Args:
        card: a dict from :func:`build_card`.

    Returns:
        Markdown text starting with ``## How this was measured``; unknown values read
        ``unknown``.
    """
    inp = card.get("input") or {}
    key = card.get("answer_key") or {}
    lines = [
        "## How this was measured",
        "",
        *provenance_lines(card),
        f"- Input: `{_fmt(inp.get('path') or inp.get('name'))}` (sha256 {_fmt(inp.get('sha256'))}, "
        f"format {_fmt(inp.get('format'))})",
    ]
    if card.get("dataset_reference_sha256"):
        lines.append(f"- Dataset reference sha256: {card['dataset_reference_sha256']}")
    sample = card.get("sample") or {}
    described = (inp.get("question_set") or {}).get("description")
    question_set = str(card.get("question_set"))
    if sample.get("from"):
        question_set += (
            f": a data.limit sample (seed {sample.get('seed')}) of the input's "
            f"{described or str(sample['from']) + ' questions'}"
        )
    elif described:
        question_set = described
    lines.append(f"- Question set: {question_set}; category 5: {card.get('category_5_policy')}")
    f1 = card.get("f1")
    lines.append(
        f"- F1: {f1['variant']} ({_fmt(f1.get('version'))})" if f1 else "- F1: not computed"
    )
    bleu = card.get("bleu1")
    lines.append(f"- BLEU-1: {_fmt(bleu.get('version'))}" if bleu else "- BLEU-1: not computed")
    judge = card.get("judge")
    if judge:
        model = _fmt(judge.get("model"))
        if judge.get("model_snapshot") and judge["model_snapshot"] != judge.get("model"):
            model += f" (snapshot {judge['model_snapshot']})"
        not_run = " (dry run: not run, no call made)" if judge.get("dry_run") else ""
        lines.append(
            f"- Judge{not_run}: {model}, protocol {_fmt(judge.get('protocol'))}, prompt "
            f"{_fmt(judge.get('prompt_version'))}, parser {_fmt(judge.get('parser_version'))}, "
            f"temperature {_fmt(judge.get('temperature'))}, {_fmt(judge.get('runs'))} runs, "
            f"{_fmt(judge.get('aggregation'))}"
        )
        if judge.get("provider"):
            lines.append(
                f"- Judge API: {judge['provider']}, {_fmt(judge.get('endpoint_kind'))} endpoint "
                f"{_fmt(judge.get('endpoint'))}"
            )
        lines += [f"- Judge check: WARNING: {warning}" for warning in judge.get("warnings") or ()]
    else:  # a judge that stopped (a spend cap, an error) may have paid: never "not run"
        status = card.get("judge_status")
        lines.append(f"- Judge: did not finish ({status})" if status else "- Judge: not run")
    note = template_note(judge) if judge else None
    if note:
        lines.append(f"- Judge prompt: {note}")
    if card.get("stored_judge"):
        lines.append(stored_judge_line(card.get("stored_judge_source")))
    if key.get("corrected_scored_beside"):
        lines.append(
            "- Answer key: original LoCoMo for every headline number; a corrected key (errata "
            f"{_fmt(key.get('errata_path'))}, sha256 {_fmt(key.get('errata_sha256'))}) is "
            "scored beside it for the lexical metrics in 'Answer key: original vs corrected'"
            + ("; J is judged against the original gold only" if judge else "")
        )
    elif key.get("errata_path"):  # scorer=judge: nothing lexical to score against it
        lines.append(
            f"- Answer key: original LoCoMo; errata {_fmt(key.get('errata_path'))} (sha256 "
            f"{_fmt(key.get('errata_sha256'))}) read but not applied: J is judged against the "
            "original gold (docs/compare.md)"
        )
    elif key.get("version") == "errata":
        lines.append(
            f"- Answer key: corrected (errata {_fmt(key.get('errata_path'))}, "
            f"sha256 {_fmt(key.get('errata_sha256'))})"
        )
    elif key.get("locomo") is False:  # not LoCoMo's questions (e.g. the invented example)
        lines.append("- Answer key: the golds in the input file")
    else:
        lines.append("- Answer key: original LoCoMo")
    return "\n".join(lines) + "\n"


def _get(card: Mapping[str, Any], dotted: str) -> Any:
    value: Any = card
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def card_mismatches(card_a: Mapping[str, Any], card_b: Mapping[str, Any]) -> list[str]:
    """Differences that make two runs incomparable without ``allow_mismatch``.

    Args:
        card_a: card of run A.
        card_b: card of run B.

    Returns:
        One line per blocking difference, e.g. ``"f1.variant: locomo vs mem0"``; checked
        fields: ``f1.variant`` (when both computed F1), ``question_set``, ``answer_key``
        (version and errata sha256). Empty when comparable.
    """
    out: list[str] = []
    va, vb = _get(card_a, "f1.variant"), _get(card_b, "f1.variant")
    if card_a.get("f1") and card_b.get("f1") and va != vb:
        out.append(f"f1.variant: {va} vs {vb}")
    qa, qb = card_a.get("question_set"), card_b.get("question_set")
    if qa != qb:
        out.append(f"question_set: {qa} vs {qb}")
    ka, kb = _headline_key(card_a), _headline_key(card_b)
    if ka != kb:
        out.append(f"answer_key: {_key_text(ka)} vs {_key_text(kb)}")
    return out


def _headline_key(card: Mapping[str, Any]) -> tuple[Any, Any]:
    """The answer key of a card's headline numbers: ``(version, errata sha256 or None)``.

    A corrected key scored beside the original one does not change the headline key.
    """
    version = _get(card, "answer_key.version")
    if version == "original":
        return version, None
    return version, _get(card, "answer_key.errata_sha256")


def _key_text(key: tuple[Any, Any]) -> str:
    version, sha = key
    return str(version) if not sha else f"{version} ({str(sha)[:12]})"


# informational fields compared by card_differences (dotted paths into the card)
COMPARED_FIELDS = (
    "f1.variant",
    "f1.version",
    "bleu1.version",
    "question_set",
    "answer_key.version",
    "answer_key.errata_sha256",
    "judge.provider",
    "judge.endpoint",
    "judge.model",
    "judge.model_snapshot",
    "judge.protocol",
    "judge.prompt_version",
    "judge.template_sha256",
    "judge.parser_version",
    "judge.temperature",
    "judge.runs",
    "judge.categories",
    "judge.aggregation",
    "tool.version",
)


_METRIC_SECTIONS = ("f1", "bleu1", "judge")
"""Card sections of one metric each: absent when the run did not compute it."""


def card_differences(card_a: Mapping[str, Any], card_b: Mapping[str, Any]) -> list[str]:
    """Every compared card field whose value differs, as ``"field: A vs B"`` lines.

    Args:
        card_a: card of run A.
        card_b: card of run B.

    Returns:
        Lines in :data:`COMPARED_FIELDS` order. The fields of a metric one run did not
        compute (its card section ``f1``, ``bleu1`` or ``judge`` is absent: a judge-only
        run has no F1) are left out: they say nothing about the numbers compared.
    """
    out = []
    for name in COMPARED_FIELDS:
        section = name.split(".", 1)[0]
        if "." in name and section in _METRIC_SECTIONS and not (
            card_a.get(section) and card_b.get(section)
        ):
            continue
        a, b = _get(card_a, name), _get(card_b, name)
        if a != b:
            out.append(f"{name}: {_fmt(a)} vs {_fmt(b)}")
    return out


def baseline_card_differences(
    card: Mapping[str, Any], baseline_card: Mapping[str, Any]
) -> list[str]:
    """Card fields a published baseline states and a run differs on.

    Args:
        card: the run's card (:func:`build_card`).
        baseline_card: the ``card`` of a ``conf/baselines/*.yaml`` set: the same layout,
            with what the publication states; unknown fields ``null`` or absent.

    Returns:
        ``"field: run vs baseline"`` lines in :data:`COMPARED_FIELDS` order, for fields
        the baseline states (not ``None``) and the run's value differs; judge fields as
        :func:`~locomo_exp.report.judge_match.judge_field_difference` says (a dated
        snapshot of the model named is marked as the same model; a binary template is
        not "template vs binary").
    """
    out = []
    for name in COMPARED_FIELDS:
        theirs = _get(baseline_card, name)
        if theirs is None:
            continue
        ours = _get(card, name)
        if name.startswith("judge."):  # a model's snapshot; a binary template (judge_match.py)
            line = judge_field_difference(name, ours, theirs, card)
            out += [line] if line else []
        elif ours != theirs:
            out.append(f"{name}: {_fmt(ours)} vs {theirs}")
    return out


def baseline_card_unstated(
    card: Mapping[str, Any], baseline_card: Mapping[str, Any]
) -> list[str]:
    """Fields that decide comparability which a published baseline does not state.

    Args:
        card: the run's card (:func:`build_card`).
        baseline_card: the ``card`` of a ``conf/baselines/*.yaml`` set.

    Returns:
        ``"field (this run: value)"`` for the :data:`BLOCKING_FIELDS` other than
        ``f1.variant`` (the F1 tables score with the baseline's variant) that the baseline
        leaves ``null`` while the run's value is known: e.g.
        ``question_set (this run: custom (20))``.
    """
    out = []
    for name in BLOCKING_FIELDS:
        if name == "f1.variant" or _get(baseline_card, name) is not None:
            continue
        ours = _get(card, name)
        if ours is not None and not isinstance(ours, Mapping):
            out.append(f"{name} (this run: {ours})")
    return out


__all__ = [
    "BLOCKING_FIELDS",
    "baseline_card_differences",
    "baseline_card_unstated",
    "COMPARED_FIELDS",
    "build_card",
    "card_differences",
    "card_mismatches",
    "git_commit",
    "provenance",
    "provenance_lines",
    "question_set_label",
    "render_card_markdown",
    "stored_judge_line",
    "tool_version",
]
