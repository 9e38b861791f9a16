"""What a LongMemEval run writes: ``scores.jsonl`` rows, ``summary.json``, ``card.json``.

Pure builders from the matched answers (:mod:`.answers`) and, when the judge
ran, its result and audit (numbers and words only; markdown is :mod:`.report`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.benchmarks.longmemeval.answers import LmeItem, LmeMatched
from locomo_exp.benchmarks.longmemeval.controls import LmeControl
from locomo_exp.benchmarks.longmemeval.judge_source import LME_SCALES, lme_stored_judge_source
from locomo_exp.benchmarks.longmemeval.protocol import LONGMEMEVAL
from locomo_exp.benchmarks.longmemeval.reference import LmeReference
from locomo_exp.benchmarks.longmemeval.scoring import METRIC_VERSION, lme_accuracies
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.report.provenance import provenance
from locomo_exp.results import SCHEMA_VERSION, QARecord
from locomo_exp.results.money import round_money
from locomo_exp.stats.agreement import binary_agreement, wilson_interval
from locomo_exp.stats.correction import corrected_j


def accepted(verdict: float) -> bool:
    """Whether a question's verdict (0-1: a run's yes/no, or the mean of its runs) is a yes.

    For the yes/no comparisons (agreement with stored verdicts, labels or the panel, Cohen's
    kappa, the corrected accuracy): yes when at least half its runs said yes
    (:data:`lme.ACCEPT_AT` on 0-100). The accuracies use the mean itself.
    """
    return float(verdict) * 100.0 >= lme.ACCEPT_AT


def _verdicts(items: list[LmeItem], source: str) -> list[tuple[str, str, bool | None]]:
    return [
        (
            item.question.question_id,
            item.question.question_type,
            item.answer.label if source == "stored" else None,
        )
        for item in items
    ]


def score_rows(
    matched: LmeMatched, judge: JudgeRunResult | None = None
) -> list[dict[str, Any]]:
    """One row per scored question, as written to ``scores.jsonl``.

    Args:
        matched: answer rows matched to the dataset.
        judge: this project's judge run, when it ran (adds ``j_mean``, ``j_runs``...).

    Returns:
        Rows ``{question_id, question_type, abstention, judge_kind, question, answer,
        hypothesis, stored_label?, stored_label_model?}``.
    """
    rows = []
    for item in matched.items:
        q, a = item.question, item.answer
        row: dict[str, Any] = {
            "question_id": q.question_id,
            "question_type": q.question_type,
            "abstention": q.abstention,
            "judge_kind": q.kind,
            "question": q.question,
            "answer": q.answer,
            "hypothesis": a.hypothesis,
        }
        if a.label is not None:
            row["stored_label"] = a.label
            row["stored_label_model"] = a.label_model
        if judge is not None:
            row.update(judge.question_json(q.question_id))
        rows.append(row)
    return rows


def build_lme_summary(
    *,
    answers_path: Path,
    answers_sha256: str,
    reference: LmeReference,
    matched: LmeMatched,
    n_rows: int,
    null_hypotheses: int,
    stored_models: list[str],
    seed: int,
    judged: tuple[dict[str, float | None], dict[str, Any]] | None = None,
    dry_run: tuple[dict[str, Any], dict[str, Any]] | None = None,
    judge_status: str | None = None,
) -> dict[str, Any]:
    """The ``summary.json`` content of a LongMemEval run (numbers and words only).

    Args:
        answers_path: the answer file.
        answers_sha256: its hash.
        reference: the dataset's questions.
        matched: rows matched to it.
        n_rows: rows in the answer file.
        null_hypotheses: rows whose hypothesis was null.
        stored_models: judge models of the stored verdicts (empty: none stored).
        seed: seed of the task average's bootstrap interval.
        judged: this project's verdicts (question id -> the mean of its runs' verdicts on
            0-1, or ``None``) and the judge section (:func:`judge_section`), when the judge ran.
        dry_run: the judge section and the estimate of a judge dry run (nothing judged).
        judge_status: the judge's status text when it was asked for.

    Returns:
        ``{"schema_version", "scales", "benchmark", "input", "versions", "status", "stored",
        "judge", "headline"}``: ``stored`` (with ``judge_source``, what is known of its
        judge) and ``headline`` hold the figures (0-1) of the stored verdicts, or are
        ``None``. ``judge`` is this project's judge: ``settings`` (model, protocol,
        provider, endpoint, ...) and its ``figures``; after a dry run ``figures`` is
        ``None`` and ``dry_run_estimate`` holds the estimate (as in a LoCoMo run's
        ``judge``); ``None`` when no judge was asked for. ``schema_version`` is LoCoMo's
        summary version, ``scales`` names each figure's scale
        (:data:`.judge_source.LME_SCALES`).
    """
    stored = None
    if stored_models:
        figures = lme_accuracies(_verdicts(matched.items, "stored"), seed=seed).to_json()
        stored = {
            "source": "stored",
            "judge_model": ", ".join(stored_models),
            "judge_source": lme_stored_judge_source(stored_models),
            "figures": figures,
        }
    judge = None
    if judged is not None:
        verdicts, section = judged
        judge = {
            "source": "judge",
            "judge_model": f"{section.get('model')}, protocol {section.get('protocol')}",
            "answered_model": section.get("model_snapshot"),
            "figures": lme_accuracies(
                [(i.question.question_id, i.question.question_type,
                  verdicts.get(i.question.question_id)) for i in matched.items],
                seed=seed,
            ).to_json(),
            "settings": section,
            "agreement_with_stored": _agreement(matched, verdicts) if stored else None,
        }
    dry_judge = None
    if dry_run is not None:
        section, estimate = dry_run
        dry_judge = {
            "source": "judge",
            "judge_model": f"{section.get('model')}, protocol {section.get('protocol')}",
            "figures": None,
            "settings": section,
            "agreement_with_stored": None,
            "dry_run_estimate": estimate,
        }
    status = {"j": "ok (this tool's judge)" if judge else "ok (stored verdicts)" if stored
              else "not measured: no stored verdicts"}
    if judge_status is not None:
        status["judge"] = judge_status
    summary = {
        "schema_version": SCHEMA_VERSION,
        "scales": dict(LME_SCALES),
        "benchmark": lme.NAME,
        "input": {
            "path": str(answers_path),
            "sha256": answers_sha256,
            "format": "longmemeval (eval-results)" if stored_models else "longmemeval",
            "reference": reference.to_json(),
            "counts": {
                "rows": n_rows,
                "matched": len(matched.items),
                "skipped_ids": len(matched.skipped_ids),
                "unanswered": len(matched.unanswered_ids),
                "null_hypotheses": null_hypotheses,
            },
            "skipped_examples": matched.skipped_ids[:5],
        },
        "versions": {"metrics": METRIC_VERSION, "lexical": "off (not in LongMemEval's protocol)"},
        "status": status,
        "stored": stored,
        "judge": judge or dry_judge,
        "headline": judge or stored,  # a dry run's judge has no figures
    }
    rounded: dict[str, Any] = round_money(summary)  # USD to a millionth, as written
    return rounded


def build_lme_card(
    summary: dict[str, Any], *, argv: list[str] | None = None
) -> dict[str, Any]:
    """The ``card.json`` of a LongMemEval run.

    Args:
        summary: the run's ``summary.json``.
        argv: the command line (default ``sys.argv``).

    Returns:
        LoCoMo's provenance fields (:func:`locomo_exp.report.provenance.provenance`:
        ``card_version``, ``tool`` with its git commit, ``command_line``, ``date``), then
        ``scales``, ``benchmark``, ``reference`` (with the variant and ``variant_label`` in
        LongMemEval's terms), ``input``, ``verdicts``, ``stored_judge_source`` (or ``None``),
        ``metric_version``, ``lexical``, ``judge``.
    """
    headline = summary.get("headline")
    reference = dict(summary["input"]["reference"])
    reference["variant_label"] = lme.variant_label(str(reference["variant"]))
    return {
        **provenance(argv=argv),
        "scales": dict(summary.get("scales") or LME_SCALES),
        "benchmark": lme.NAME,
        "reference": reference,
        "input": {"path": summary["input"]["path"], "sha256": summary["input"]["sha256"]},
        "verdicts": (
            f"{headline['source']} ({headline['judge_model']})" if headline else "none"
        ),
        "stored_judge_source": (summary.get("stored") or {}).get("judge_source"),
        "metric_version": summary["versions"]["metrics"],
        "lexical": "off",
        "judge": _card_judge(summary.get("judge")),
    }


CARD_JUDGE = (
    "model", "protocol", "prompt_version", "temperature", "max_tokens", "runs", "provider",
    "endpoint", "endpoint_kind",
)
"""What ``card.json`` says of the judge that made the verdicts (never a credential)."""


def _card_judge(judge: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The card's judge: only one whose verdicts are figures (not a dry run's)."""
    if not judge or judge.get("figures") is None:
        return None
    settings = judge.get("settings") or {}
    card = {k: settings.get(k) for k in CARD_JUDGE[:6]}
    if settings.get("provider"):  # absent in runs made before it was recorded
        card.update({k: settings.get(k) for k in CARD_JUDGE[6:]})
    return card


def dry_run_of(summary: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """(estimate, judge settings) of a judge dry run's summary, else ``None``.

    Reads both shapes: ``judge.dry_run_estimate`` and ``judge.settings``, and that of runs
    made before them (``judge_dry_run`` and ``judge_dry_run_model`` at the top level).
    """
    judge = summary.get("judge") or {}
    estimate = judge.get("dry_run_estimate")
    if isinstance(estimate, Mapping):
        return estimate, judge.get("settings") or {}
    old = summary.get("judge_dry_run")
    if isinstance(old, Mapping):
        return old, summary.get("judge_dry_run_model") or {}
    return None


def _agreement(matched: LmeMatched, verdicts: dict[str, float | None]) -> dict[str, Any] | None:
    """This judge's verdicts against the file's stored ones (Cohen's kappa, Wilson agreement)."""
    pairs = [
        (bool(i.answer.label), accepted(verdict))
        for i in matched.items
        if i.answer.label is not None
        and (verdict := verdicts.get(i.question.question_id)) is not None
    ]
    if not pairs:
        return None
    found = binary_agreement([p[0] for p in pairs], [p[1] for p in pairs])
    return {
        "n": found.n,
        "agreement": found.agreement.rate,
        "agreement_ci": [found.agreement.ci_low, found.agreement.ci_high],
        "kappa": found.kappa,
        "stored_yes_judge_no": found.fn,
        "stored_no_judge_yes": found.fp,
        "stored_yes": found.tp + found.fn,  # sensitivity's n (J deflated, trust/lme_checks)
        "stored_no": found.fp + found.tn,
    }


def _rate(successes: int, n: int) -> dict[str, Any]:
    p = wilson_interval(successes, n)
    return {"count": successes, "n": n, "rate": p.rate, "ci_low": p.ci_low, "ci_high": p.ci_high}


def audit_section(
    controls: list[LmeControl],
    result: JudgeRunResult,
    verdicts: dict[str, float | None],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """The audit of a LongMemEval judge run: controls by kind and the corrected accuracy.

    Args:
        controls: the controls judged (:func:`.controls.build_lme_controls`).
        result: their judge run.
        verdicts: the real questions' verdicts (for the corrected overall accuracy).
        seed: bootstrap seed of the corrected accuracy's interval.

    Returns:
        ``{"kinds": {kind: {"n", "expected_yes", "agreed", "false_accept", "false_reject"}},
        "sensitivity", "specificity", "corrected_overall"}``, rates on 0-1 with Wilson
        intervals; the corrected overall accuracy is Rogan-Gladen's (J + sp - 1) / (se + sp - 1)
        with a bootstrap interval (:func:`locomo_exp.stats.correction.corrected_j`), from
        controls -- weaker evidence than human labels.
    """
    judged = []
    for control in controls:
        agg = result.per_question.get(control.record.question_id)
        if agg is not None and agg.mean_score is not None:
            judged.append((control, agg.mean_score >= lme.ACCEPT_AT))
    kinds: dict[str, Any] = {}
    for kind in dict.fromkeys(c.kind for c in controls):
        rows = [(c, v) for c, v in judged if c.kind == kind]
        yes = [v for c, v in rows if c.expected]
        no = [v for c, v in rows if not c.expected]
        kinds[kind] = {
            "n": len(rows),
            "expected_yes": len(yes),
            "agreed": _rate(sum(v == c.expected for c, v in rows), len(rows)),
            "false_accept": _rate(sum(no), len(no)),
            "false_reject": _rate(len(yes) - sum(yes), len(yes)),
        }
    positives = [v for c, v in judged if c.expected]
    negatives = [v for c, v in judged if not c.expected]
    out: dict[str, Any] = {
        "kinds": kinds,
        "sensitivity": _rate(sum(positives), len(positives)),
        "specificity": _rate(len(negatives) - sum(negatives), len(negatives)),
        "corrected_overall": None,
    }
    accepts = [accepted(v) for v in verdicts.values() if v is not None]
    if accepts and positives and negatives:
        corrected = corrected_j(
            accepts, [c.expected for c, _ in judged], [v for _, v in judged],
            source="audit", seed=seed,
        )
        out["corrected_overall"] = {
            "accuracy": corrected.estimate.value,
            "ci_low": corrected.ci_low,
            "ci_high": corrected.ci_high,
            "reason": corrected.estimate.reason,
            "method": corrected.method,
        }
    return out


def labels_section(
    matched: LmeMatched,
    summary: dict[str, Any],
    labels: Any,
    *,
    judge_verdicts: dict[str, float | None] | None = None,
    seed: int = 0,
) -> dict[str, Any] | None:
    """The headline verdicts (judge or stored) against human correctness labels.

    Args:
        matched: the run's answers.
        summary: the run's summary (its ``headline`` names the verdict source).
        labels: a :class:`locomo_exp.trust.labels.LabelSet` (``judge.labels``).
        judge_verdicts: this run's judge verdicts when the judge ran (else the stored ones).
        seed: bootstrap seed of the corrected accuracy's interval.

    Returns:
        ``{"verdicts", "n", "agreement", "kappa", "sensitivity", "specificity", "n_ambiguous",
        "n_unmatched", "n_unscored", "corrected_overall"}`` (rates 0-1 with Wilson intervals;
        Rogan-Gladen corrected overall accuracy with a bootstrap interval), or ``None`` when
        the run has no verdicts.
    """
    from locomo_exp.trust.labels import compare_with_labels

    headline = summary.get("headline")
    if not headline:
        return None
    records = [
        QARecord(
            question_id=i.question.question_id, question=i.question.question,
            ground_truth=i.question.gold_text, prediction=i.answer.hypothesis,
            category=LONGMEMEVAL.kind_id(i.question.kind), question_type=i.question.question_type,
            kind=i.question.kind,
        )
        for i in matched.items
    ]
    if judge_verdicts is not None:
        verdicts: dict[str, Any] = dict(judge_verdicts)
    else:
        verdicts = {
            i.question.question_id: None if i.answer.label is None else float(i.answer.label)
            for i in matched.items
        }
    scores = {q: None if v is None else float(v) * 100.0 for q, v in verdicts.items()}
    found = compare_with_labels(records, scores, labels, threshold=lme.ACCEPT_AT)
    out: dict[str, Any] = {
        "verdicts": f"{headline['source']} ({headline['judge_model']})",
        "n": 0,
        "n_ambiguous": found.n_ambiguous,
        "n_unmatched": found.n_unmatched,
        "n_unscored": found.n_unscored,
        "corrected_overall": None,
    }
    agreement = found.overall
    if agreement is None:
        return out
    out.update(
        n=agreement.n,
        agreement=_rate(agreement.tp + agreement.tn, agreement.n),
        kappa=agreement.kappa,
        sensitivity=_rate(agreement.tp, agreement.tp + agreement.fn),
        specificity=_rate(agreement.tn, agreement.tn + agreement.fp),
    )
    accepts = [accepted(v) for v in verdicts.values() if v is not None]
    if agreement.tp + agreement.fn and agreement.tn + agreement.fp:
        corrected = corrected_j(
            accepts, list(found.reference), list(found.judge), source="labels", seed=seed
        )
        out["corrected_overall"] = {
            "accuracy": corrected.estimate.value,
            "ci_low": corrected.ci_low,
            "ci_high": corrected.ci_high,
            "reason": corrected.estimate.reason,
        }
    return out


def panel_member(
    preset: str,
    model: str,
    matched: LmeMatched,
    member: dict[str, float | None],
    main: dict[str, float | None],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """One panel judge's figures and its agreement with the run's judge.

    Args:
        preset: the member's preset (``judge.panel`` entry).
        model: its model id.
        matched: the run's answers.
        member: its verdicts by question id (mean of its runs on 0-1; ``None``: unscored).
        main: the run's judge verdicts (the same scale).
        seed: seed of the task average's interval.

    Returns:
        ``{"preset", "model", "figures", "agreement_with_judge"}`` (figures as
        :meth:`.scoring.LmeAccuracies.to_json`; agreement with Cohen's kappa).
    """
    figures = lme_accuracies(
        [(i.question.question_id, i.question.question_type, member.get(i.question.question_id))
         for i in matched.items],
        seed=seed,
    ).to_json()
    pairs = [
        (accepted(a), accepted(v))
        for q, v in member.items()
        if v is not None and (a := main.get(q)) is not None
    ]
    agreement = None
    if pairs:
        found = binary_agreement([a for a, _ in pairs], [b for _, b in pairs])
        agreement = {
            "n": found.n,
            "agreement": _rate(found.tp + found.tn, found.n),
            "kappa": found.kappa,
        }
    return {"preset": preset, "model": model, "figures": figures,
            "agreement_with_judge": agreement}


__all__ = [
    "CARD_JUDGE",
    "accepted",
    "dry_run_of",
    "panel_member",
    "labels_section",
    "audit_section",
    "build_lme_card",
    "build_lme_summary",
    "score_rows",
]
