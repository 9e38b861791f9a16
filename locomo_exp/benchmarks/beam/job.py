"""One BEAM job: the pipeline's hooks (answers file -> both profiles' figures -> outputs -> MLflow).

Stored rubric-item verdicts (mem0's memory-benchmarks layout) are scored with no judge
call; ``scorer=judge`` judges every rubric item (and aligns event-ordering lines under
``beam-official``), then the audit controls. The steps are the pipeline's
(:func:`locomo_exp.benchmarks.pipeline.run_job`). Outputs: ``report.md``, ``summary.json``,
``scores.jsonl``, ``card.json``, ``config.yaml`` (docs/beam.md).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks import plugin_trust
from locomo_exp.benchmarks.beam import tracking as beam_tracking
from locomo_exp.benchmarks.beam.abilities import NAME, TITLE
from locomo_exp.benchmarks.beam.judged import (
    BeamJudged,
    item_config,
    item_records,
    judge_beam,
    spend_parts,
)
from locomo_exp.benchmarks.beam.load import read_beam
from locomo_exp.benchmarks.beam.report import render_console, render_report
from locomo_exp.benchmarks.beam.rows import BeamInput
from locomo_exp.benchmarks.beam.summary import build_card, build_summary, score_rows
from locomo_exp.benchmarks.beam.trust import (
    UNIT,
    beam_trust_parts,
    category_names,
    plan_beam_trust,
    run_beam_trust,
)
from locomo_exp.benchmarks.pipeline import run_job
from locomo_exp.benchmarks.steps import JobContext, JobResult, JobSteps
from locomo_exp.config import BeamProfile, ExperimentConfig, JudgeConfig
from locomo_exp.data.load import expand_paths
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL
from locomo_exp.judge.spend import Part
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.stop import CallsStop
from locomo_exp.results import QARecord
from locomo_exp.results.questions import QuestionRow

LOCOMO_ONLY_DATA = ("limit", "runs", "errata", "categories_from")
"""``data.*`` settings a BEAM run does not read: refused when set, never silently ignored."""

JUDGE_ONLY = (
    "{setting}: read by judged BEAM runs only (scorer=judge); stored item verdicts are scored "
    "under both profiles with no option"
)

BeamRunResult = JobResult
"""What one BEAM job produced (the pipeline's :class:`~locomo_exp.benchmarks.steps.JobResult`)."""


def _check_settings(cfg: ExperimentConfig) -> None:
    given = [f"data.{name}={getattr(cfg.data, name)}" for name in LOCOMO_ONLY_DATA
             if getattr(cfg.data, name) is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not available for BEAM answers, which are scored "
                         "whole; drop the setting")
    official = BeamProfile(cfg.beam.profile) is BeamProfile.official
    if not cfg.scorer.uses_judge:
        if official or cfg.beam.strict:
            raise ValueError(JUDGE_ONLY.format(
                setting="beam.strict=true" if cfg.beam.strict else "beam.profile=official"))
        return
    if cfg.beam.strict and not official:
        raise ValueError("beam.strict=true fixes the quirks of beam.profile=official; add "
                         "beam.profile=official (beam-nugget has none to fix)")


def settings_problems(cfg: ExperimentConfig) -> list[str]:
    """The job's settings a BEAM run refuses (each one line), checked before any job starts.

    Args:
        cfg: the typed config.

    Returns:
        ``[]`` when the settings are a BEAM job's; else the line :func:`run_beam` would stop
        on (LoCoMo-only ``data.*`` keys, ``beam.*`` without a judge, a judge protocol the
        item calls cannot use).
    """
    try:
        _check_settings(cfg)
        if cfg.scorer.uses_judge:
            item_config(cfg.judge, cfg.beam)
    except ValueError as error:
        return [str(error)]
    return []


class BeamSteps(JobSteps[BeamInput, BeamJudged]):
    """BEAM's hooks for the pipeline: reader, rubric-item judge (with audit), summary, names."""

    round_money = True

    def check_settings(self, cfg: ExperimentConfig) -> None:
        """LoCoMo-only ``data.*`` keys and ``beam.*`` without a judge (one line).

        Raises:
            ValueError: as :func:`settings_problems` says.
        """
        _check_settings(cfg)

    def judge_config(self, cfg: ExperimentConfig) -> JudgeConfig | None:
        """The rubric-item calls' judge (:func:`.judged.item_config`), or ``None``.

        Raises:
            ValueError: a LoCoMo ``judge.protocol``.
        """
        return item_config(cfg.judge, cfg.beam) if cfg.scorer.uses_judge else None

    def read(self, cfg: ExperimentConfig, path: Path, start_dir: Path, *, judging: bool
             ) -> BeamInput:
        """Read the answers (any layout; ``data.reference`` for the authors' layout).

        A judged run's ``judge.labels`` and ``judge.panel`` are planned here, before any
        call (:func:`.trust.plan_beam_trust`): a bad labels file or preset is refused with
        nothing written or paid.

        Raises:
            ValueError: a missing ``data.reference``; ``DataValidationError``: a bad file.
            JudgeError: a bad labels file or panel preset (one line naming it).
        """
        ref = expand_paths(cfg.data.reference, start_dir)[0] if cfg.data.reference else None
        if ref is not None and not ref.exists():
            raise ValueError(f"data.reference={cfg.data.reference}: no such file or folder")
        inp = read_beam(path, setting=cfg.data.setting, reference=ref)
        if not judging:
            return inp
        return replace(inp, trust_plan=plan_beam_trust(inp, cfg, start_dir))

    def judge_records(self, inp: BeamInput, judge: JudgeConfig) -> list[QARecord]:
        """One record per rubric item (:func:`.judged.item_records`)."""
        return item_records(inp, template=judge.protocol == TEMPLATE_PROTOCOL)

    def spend_parts(self, inp: BeamInput, judge: JudgeConfig, cfg: ExperimentConfig
                    ) -> list[Part]:
        """Items, alignment (beam-official), audit (:func:`.judged.spend_parts`), panel."""
        return [*spend_parts(inp, cfg.judge, cfg.beam), *beam_trust_parts(inp, cfg)]

    def judge(self, inp: BeamInput, judge: JudgeConfig, ctx: JobContext) -> BeamJudged:
        """Judge every item, align, audit (:func:`.judged.judge_beam`; the audit is its trust)."""
        return judge_beam(inp, ctx.cfg.judge, ctx.cfg.beam, start_dir=ctx.start_dir,
                          client=ctx.client, calls_stop=ctx.calls_stop, spend=ctx.spend,
                          prompts=ctx.prompts, cache=ctx.cache)

    def trust(self, inp: BeamInput, judged: BeamJudged, ctx: JobContext) -> BeamJudged:
        """Labels (kappa, corrected accept rate) and panel over the items (:mod:`.trust`)."""
        return run_beam_trust(inp, judged, ctx)

    def summary(self, inp: BeamInput, judged: BeamJudged | None, cfg: ExperimentConfig
                ) -> dict[str, Any]:
        """Both profiles' figures (:func:`.summary.build_summary`)."""
        return build_summary(judged.inp or inp if judged is not None else inp,
                             samples=cfg.report.bootstrap_samples, seed=cfg.report.seed,
                             judged=judged.section() if judged is not None else None)

    def score_rows(self, inp: BeamInput, judged: BeamJudged | None) -> list[dict[str, Any]]:
        """One row per question (none for a dry run)."""
        if judged is None:
            return score_rows(inp)
        return score_rows(judged.inp, strict=judged.strict) if judged.inp else []

    def question_rows(self, rows: list[dict[str, Any]], judge_model: str | None
                      ) -> list[QuestionRow]:
        """Its rows as question rows (:func:`.questions.beam_question_rows`)."""
        from locomo_exp.benchmarks.beam.questions import beam_question_rows

        return beam_question_rows(rows)

    def card(self, summary: dict[str, Any]) -> dict[str, Any]:
        """``card.json`` (:func:`.summary.build_card`)."""
        return build_card(summary)

    def report(self, summary: dict[str, Any], card: dict[str, Any]) -> str:
        """``report.md`` (:func:`.report.render_report`)."""
        return render_report(summary, card)

    def console(self, summary: dict[str, Any]) -> list[str]:
        """The console's figures (:func:`.report.render_console`), then labels and panel."""
        trust = (summary.get("judge") or {}).get("trust")
        return [*render_console(summary),  # its warnings hold the trust checks' already
                *plugin_trust.trust_console_lines(trust, unit=UNIT, with_warnings=False)]

    def gate(self, summary: dict[str, Any]) -> str | None:
        """The judge audit's gate (``judge.audit.max_false_accept`` ...) when it failed."""
        gate = ((summary.get("judge") or {}).get("audit") or {}).get("gate") or {}
        return str(gate["message"]) if gate.get("fails_run") else None

    def run_tags(self, summary: dict[str, Any]) -> dict[str, str]:
        """:func:`.tracking.run_tags`."""
        return beam_tracking.run_tags(summary)

    def run_params(self, summary: dict[str, Any]) -> dict[str, str]:
        """:func:`.tracking.run_params`."""
        return beam_tracking.run_params(summary)

    def run_metrics(self, summary: dict[str, Any]) -> dict[str, float]:
        """:func:`.tracking.run_metrics`, and labels' and panel's (LoCoMo's names)."""
        judge = summary.get("judge") or {}
        names = category_names(template=bool(judge.get("template")))
        return {**beam_tracking.run_metrics(summary),
                **plugin_trust.trust_run_metrics(judge.get("trust"), names)}


STEPS = BeamSteps(NAME, TITLE, "answers file")
"""BEAM's hooks, as the pipeline runs them."""


def run_beam(cfg: ExperimentConfig, output_dir: Path, start_dir: Path | None = None, *,
             client: JudgeClient | None = None, calls_stop: CallsStop | None = None,
             run_name: str | None = None, parent_run_id: str | None = None,
             extra_tags: dict[str, str] | None = None) -> JobResult:
    """Score a BEAM answers file with both profiles; ``scorer=judge`` judges every item first.

    The pipeline's job (:func:`locomo_exp.benchmarks.pipeline.run_job`) over :data:`STEPS`.

    Args:
        cfg: the typed config (``data.path``, ``data.setting``, ``report``, ``tracking``;
            ``judge`` and ``beam`` for a judged run).
        output_dir: where to write the outputs.
        start_dir: the directory relative paths are resolved against (default: cwd).
        client: a judge client to use instead of the provider's SDK (tests).
        calls_stop: set by another thread to stop paying (judged runs; calls stay cached).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file stem> · beam``); a sweep job's name.
        parent_run_id: nest the MLflow run under this one (a sweep's parent run).
        extra_tags: more MLflow tags (a sweep job's number and swept values).

    Returns:
        :class:`~locomo_exp.benchmarks.steps.JobResult`; ``exit_status`` 1 when the judge
        audit's gate failed (outputs written).

    Raises:
        DataValidationError: a bad answers file (one line: file, record, field).
        ValueError: several files, LoCoMo-only settings, ``beam.*`` without a judge, or a
            LoCoMo ``judge.protocol``.
        JudgeError: also the whole job's estimate above ``judge.max_cost_usd`` (nothing
            written, no call made).
        JudgeError, JudgeInterrupted, CallsStopped, JudgeBatchPending: from the judge
            (:func:`locomo_exp.benchmarks.beam.judged.judge_beam`); completed calls are cached.
        locomo_exp.report.run_dir.OutputDirInUse / OutputDirNotWritable: as for LoCoMo runs.
        locomo_exp.tracking.TrackingStoreError: a ``tracking.uri`` MLflow cannot use.
    """
    return run_job(STEPS, cfg, output_dir, start_dir, client=client, calls_stop=calls_stop,
                   run_name=run_name, parent_run_id=parent_run_id, extra_tags=extra_tags)


__all__ = ["STEPS", "BeamRunResult", "BeamSteps", "run_beam", "settings_problems"]
