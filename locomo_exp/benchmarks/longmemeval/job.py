"""One LongMemEval job: the pipeline's hooks (answers + dataset -> figures, outputs, MLflow).

:func:`run_longmemeval` is what ``python -m locomo_exp data=file data.path=FILE
data.reference=REF`` runs when ``FILE`` is a LongMemEval answer file (detected from its
rows, :func:`~.detect.is_longmemeval`) or when ``benchmark=longmemeval`` is given. The steps
are the pipeline's (:func:`locomo_exp.benchmarks.pipeline.run_job`); :class:`LmeSteps` gives
what is LongMemEval's own: the reader (answers, dataset, human labels), the judge and its
trust checks (:mod:`.judged`: panel, audit), the summary, rows, card, report, console and
MLflow names. The stored verdicts of an ``.eval-results-<model>`` file are read as J with
their judge named; no judge is called for them. Outputs: ``report.md``, ``scores.jsonl``,
``summary.json``, ``card.json``, ``config.yaml``, ``questions.html`` (docs/longmemeval.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.longmemeval import tracking as lme_tracking
from locomo_exp.benchmarks.longmemeval.answers import LmeAnswers, LmeMatched
from locomo_exp.benchmarks.longmemeval.facts import NAME
from locomo_exp.benchmarks.longmemeval.judged import (
    LmeJudged,
    check_judge,
    judge_answers,
    judge_records,
    judge_verdicts,
    lme_judge_config,
)
from locomo_exp.benchmarks.longmemeval.reference import LmeReference
from locomo_exp.benchmarks.pipeline import run_job
from locomo_exp.benchmarks.steps import JobContext, JobResult, JobSteps
from locomo_exp.config import ExperimentConfig, JudgeConfig

if TYPE_CHECKING:
    from locomo_exp.judge.spend import Part
    from locomo_exp.llm.messages import JudgeClient
    from locomo_exp.results import QARecord
    from locomo_exp.results.questions import QuestionRow
    from locomo_exp.trust.labels import LabelSet

TITLE = "LongMemEval"
"""The benchmark's name in messages."""

NO_REFERENCE = (
    "LongMemEval answers need the dataset file for each question's type: add "
    "data.reference=<longmemeval_oracle.json, _s_cleaned or _m_cleaned>"
)

LOCOMO_ONLY_DATA = ("limit", "runs", "errata", "categories_from", "setting")
"""``data.*`` settings of LoCoMo runs that a LongMemEval run does not read: refused when set,
so a sample asked for (``data.limit``) is never silently the whole file."""

LmeRunResult = JobResult
"""What one LongMemEval job produced (the pipeline's :class:`JobResult`)."""


def locomo_only_settings(cfg: ExperimentConfig) -> str | None:
    """The refusal of LoCoMo-only ``data.*`` settings given for a LongMemEval run, or ``None``.

    Args:
        cfg: the typed config.

    Returns:
        One line naming each setting that is set (``data.limit=50``).
    """
    given = [
        f"data.{name}={getattr(cfg.data, name)}"
        for name in LOCOMO_ONLY_DATA
        if getattr(cfg.data, name) is not None
    ]
    if not given:
        return None
    return (
        f"{', '.join(given)}: not available for LongMemEval answers, which are scored whole "
        "against data.reference; drop the setting"
    )


@dataclass(frozen=True)
class LmeInput:
    """A LongMemEval job's read and validated input.

    Attributes:
        answers: the answer file's rows.
        reference: the dataset's questions.
        matched: the rows matched to the dataset.
        labels: human labels (``judge.labels``), or ``None``.
    """

    answers: LmeAnswers
    reference: LmeReference
    matched: LmeMatched
    labels: LabelSet | None

    def common(self, seed: int) -> dict[str, Any]:
        """The arguments of every :func:`.summary.build_lme_summary` call of this input."""
        return {
            "answers_path": self.answers.path,
            "answers_sha256": self.answers.sha256,
            "reference": self.reference,
            "matched": self.matched,
            "n_rows": len(self.answers.rows),
            "null_hypotheses": len(self.answers.missing_hypotheses),
            "stored_models": self.answers.label_models or (["unnamed"] if self.answers.labelled
                                                           else []),
            "seed": seed,
        }


def _card(summary: dict[str, Any]) -> dict[str, Any]:
    """``card.json`` as written (costs rounded as money)."""
    from locomo_exp.benchmarks.longmemeval.summary import build_lme_card
    from locomo_exp.results.money import round_money

    card: dict[str, Any] = round_money(build_lme_card(summary))
    return card


class LmeSteps(JobSteps[LmeInput, LmeJudged]):
    """LongMemEval's hooks for the pipeline: reader, judge, panel and audit, names."""

    round_money = True

    def check_settings(self, cfg: ExperimentConfig) -> None:
        """Refuse LoCoMo-only ``data.*`` settings (:func:`locomo_only_settings`).

        Raises:
            ValueError: one line naming each setting given.
        """
        refused = locomo_only_settings(cfg)
        if refused:
            raise ValueError(refused)

    def judge_config(self, cfg: ExperimentConfig) -> JudgeConfig | None:
        """Every kind judged (:func:`.judged.lme_judge_config`), or ``None`` without a judge.

        Raises:
            ValueError: a LoCoMo ``judge.protocol``.
        """
        return lme_judge_config(cfg.judge) if cfg.scorer.uses_judge else None

    def read(self, cfg: ExperimentConfig, path: Path, start_dir: Path, *, judging: bool
             ) -> LmeInput:
        """Read the answers, then the dataset (``data.reference``) and the human labels.

        Raises:
            DataValidationError: bad answers, dataset or labels file (one line naming file,
                record, field).
            ValueError: no ``data.reference``, or a hypothesis file without stored verdicts
                and no judge.
        """
        from locomo_exp.benchmarks.longmemeval.answers import match_reference, read_lme_answers
        from locomo_exp.benchmarks.longmemeval.reference import read_lme_reference
        from locomo_exp.data.load import expand_paths

        answers = read_lme_answers(path)  # a LoCoMo file is named as one before data.reference
        if not cfg.data.reference:
            raise ValueError(NO_REFERENCE)
        if not answers.labelled and not judging:
            raise ValueError(
                f"{path}: its rows have no autoeval_label (stored verdicts), so nothing can be "
                "scored without a judge: add scorer=judge benchmark=longmemeval (e.g. "
                "judge=gpt-4o, LongMemEval's judge)"
            )
        labels = None
        if cfg.judge.labels:  # read and checked before any call
            from locomo_exp.trust.labels import load_labels

            labels = load_labels(expand_paths(cfg.judge.labels, start_dir)[0])
        reference = read_lme_reference(expand_paths(cfg.data.reference, start_dir)[0])
        return LmeInput(answers, reference, match_reference(answers, reference), labels)

    def judge_records(self, inp: LmeInput, judge: JudgeConfig) -> list[QARecord]:
        """One record per answered question (:func:`.judged.judge_records`)."""
        return judge_records(inp.matched)

    def spend_parts(self, inp: LmeInput, judge: JudgeConfig, cfg: ExperimentConfig
                    ) -> list[Part]:
        """The answers, each panel member and the audit's controls (``max_share`` applied)."""
        from locomo_exp.benchmarks.longmemeval.controls import size_lme_audit
        from locomo_exp.benchmarks.longmemeval.dry_run import lme_spend_parts

        records = judge_records(inp.matched)
        controls, _ = size_lme_audit(records, judge, quiet=True)
        return lme_spend_parts(judge, records, [c.record for c in controls])

    def judge(self, inp: LmeInput, judge: JudgeConfig, ctx: JobContext) -> LmeJudged:
        """Judge every answer, or price the job (:func:`.judged.judge_answers`).

        Raises:
            ValueError: the judge run failed (nothing written).
        """
        return judge_answers(inp.matched, judge, ctx)

    def trust(self, inp: LmeInput, judged: LmeJudged, ctx: JobContext) -> LmeJudged:
        """The panel and the audit (:func:`.judged.check_judge`)."""
        judge = self.judge_config(ctx.cfg)
        assert judge is not None  # the trust hook runs only after the judge
        return check_judge(inp.matched, judged, judge, ctx)

    def summary(self, inp: LmeInput, judged: LmeJudged | None, cfg: ExperimentConfig
                ) -> dict[str, Any]:
        """``summary.json``: figures, judge, panel, audit, labels, checks, the run log."""
        from locomo_exp.benchmarks.longmemeval.checks import with_lme_checks
        from locomo_exp.benchmarks.longmemeval.run_log import with_run_log
        from locomo_exp.benchmarks.longmemeval.summary import build_lme_summary, labels_section

        common = inp.common(cfg.report.seed)
        if judged is None:
            summary = build_lme_summary(**common)
        elif judged.estimate is not None:
            summary = build_lme_summary(**common, dry_run=(judged.section, judged.estimate),
                                        judge_status=judged.status)
        else:
            summary = build_lme_summary(**common, judged=(judged.verdicts, judged.section),
                                        judge_status=judged.status)
            if judged.panel is not None:
                summary["panel"] = judged.panel
            if judged.audit is not None:
                summary["audit"] = judged.audit
        if inp.labels is not None:
            summary["labels"] = labels_section(
                inp.matched, summary, inp.labels, seed=cfg.report.seed,
                judge_verdicts=(None if judged is None
                                else judge_verdicts(judged.result, inp.matched)))
        if inp.labels is not None or judged is not None:  # J inflated / deflated checked
            summary = with_lme_checks(summary)
        return with_run_log(summary)  # the typed log, built last (docs/run_log.md)

    def score_rows(self, inp: LmeInput, judged: LmeJudged | None) -> list[dict[str, Any]]:
        """One row per answered question (:func:`.summary.score_rows`)."""
        from locomo_exp.benchmarks.longmemeval.summary import score_rows

        return score_rows(inp.matched, None if judged is None else judged.result)

    def question_rows(self, rows: list[dict[str, Any]], judge_model: str | None
                      ) -> list[QuestionRow]:
        """Its rows as question rows (:func:`.questions.lme_question_rows`)."""
        from locomo_exp.benchmarks.longmemeval.questions import lme_question_rows

        return lme_question_rows(rows, judge_model)

    def card(self, summary: dict[str, Any]) -> dict[str, Any]:
        """``card.json`` (:func:`.summary.build_lme_card`)."""
        from locomo_exp.benchmarks.longmemeval.summary import build_lme_card

        return build_lme_card(summary)

    def report(self, summary: dict[str, Any], card: dict[str, Any]) -> str:
        """``report.md`` (:func:`.report.render_lme_report`, with the published baselines)."""
        from locomo_exp.benchmarks.longmemeval.baselines import LME_BASELINES
        from locomo_exp.benchmarks.longmemeval.report import render_lme_report

        return render_lme_report(summary, card, LME_BASELINES)

    def console(self, summary: dict[str, Any]) -> list[str]:
        """The console's figures (:func:`.console.console_lines`)."""
        from locomo_exp.benchmarks.longmemeval.console import console_lines

        return console_lines(summary)

    def run_params(self, summary: dict[str, Any]) -> dict[str, str]:
        """:func:`.tracking.run_params` (with the card's tool version and commit)."""
        return lme_tracking.run_params(summary, _card(summary))

    def run_metrics(self, summary: dict[str, Any]) -> dict[str, float]:
        """:func:`.tracking.run_metrics` (percent)."""
        return lme_tracking.run_metrics(summary)

    def end_tags(self, summary: dict[str, Any], console: list[str]) -> dict[str, str]:
        """The run's description (:func:`.tracking.run_description`) and the warnings."""
        from locomo_exp import tracking

        metrics = lme_tracking.run_metrics(summary)
        return {tracking.NOTE_TAG: lme_tracking.run_description(metrics, summary,
                                                                _card(summary)),
                **tracking.warning_tags(summary.get("warnings") or ())}


STEPS = LmeSteps(NAME, TITLE, "answer file")
"""LongMemEval's hooks, as the pipeline runs them."""


def run_longmemeval(
    cfg: ExperimentConfig,
    output_dir: Path,
    start_dir: Path | None = None,
    *,
    client: JudgeClient | None = None,
    run_name: str | None = None,
    parent_run_id: str | None = None,
    extra_tags: dict[str, str] | None = None,
) -> JobResult:
    """Score a LongMemEval answer file against its dataset file.

    The pipeline's job (:func:`locomo_exp.benchmarks.pipeline.run_job`) over :data:`STEPS`.

    Args:
        cfg: the typed config (``data.path``, ``data.reference``, ``judge``, ``tracking``,
            ``report``).
        output_dir: where to write the outputs.
        start_dir: directory relative paths are resolved against (default: cwd).
        client: a judge client to use instead of the provider's SDK (tests).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file stem> · longmemeval``).
        parent_run_id: nest the MLflow run under this one (a sweep's parent run).
        extra_tags: more MLflow tags (a sweep job's number and swept values).

    Returns:
        :class:`~locomo_exp.benchmarks.steps.JobResult`.

    Raises:
        DataValidationError: bad answers or dataset file (one line naming file, record, field).
        ValueError: no ``data.reference``, several files, a hypothesis file without stored
            verdicts and no judge, or a failed judge run (nothing written).
        JudgeError: also the whole job's estimate (answers, panel, audit) above
            ``judge.max_cost_usd``: refused before anything is written or deleted.
        locomo_exp.report.run_dir.OutputDirInUse / OutputDirNotWritable: as for LoCoMo runs.
        locomo_exp.tracking.TrackingStoreError: a ``tracking.uri`` MLflow cannot use.
        JudgeInterrupted, CallsStopped, JudgeBatchPending: from the judge; nothing written,
            an earlier run untouched, completed calls cached (the same command resumes).
    """
    return run_job(STEPS, cfg, output_dir, start_dir, client=client, run_name=run_name,
                   parent_run_id=parent_run_id, extra_tags=extra_tags)


__all__ = [
    "LOCOMO_ONLY_DATA",
    "NO_REFERENCE",
    "STEPS",
    "LmeInput",
    "LmeRunResult",
    "LmeSteps",
    "locomo_only_settings",
    "run_longmemeval",
]
