"""One LoCoMo-Plus job: the pipeline's hooks (a stored run -> both readings' figures -> outputs).

Stored verdicts (the authors' ``judged.json`` or kumiho's ``all_results.json``) are scored
with no judge call; ``scorer=judge`` judges every item (:mod:`.judged`), ``scorer=both`` also
scores the factual items' token F1 (:mod:`.f1`; Cognitive items have no gold answer, so no F1).
The steps are the
pipeline's (:func:`locomo_exp.benchmarks.pipeline.run_job`). Outputs: ``report.md``,
``summary.json``, ``scores.jsonl``, ``card.json``, ``config.yaml`` (docs/locomo_plus.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks import plugin_trust
from locomo_exp.benchmarks.locomo_plus import tracking as plus_tracking
from locomo_exp.benchmarks.locomo_plus.audit import CONTROL_CATEGORIES
from locomo_exp.benchmarks.locomo_plus.f1 import (
    NO_GOLD,
    PlusF1,
    check_gold,
    f1_section,
    score_f1,
)
from locomo_exp.benchmarks.locomo_plus.facts import NAME, TITLE
from locomo_exp.benchmarks.locomo_plus.judged import (
    JudgedReadings,
    judge_config,
    judge_records,
    judge_section,
    judged_score_rows,
    read_judged,
)
from locomo_exp.benchmarks.locomo_plus.parsing import PARSERS
from locomo_exp.benchmarks.locomo_plus.protocol import LOCOMO_PLUS
from locomo_exp.benchmarks.locomo_plus.report import render_console, render_report
from locomo_exp.benchmarks.locomo_plus.runs import StoredRun, read_stored_run
from locomo_exp.benchmarks.locomo_plus.summary import (
    build_card,
    build_judged_summary,
    build_summary,
    score_rows,
)
from locomo_exp.benchmarks.pipeline import run_job
from locomo_exp.benchmarks.steps import JobContext, JobResult, JobSteps
from locomo_exp.config import ExperimentConfig, JudgeConfig, ScorerName
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.judge.spend import Part
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.results import QARecord, TrustSummary
from locomo_exp.results.questions import QuestionRow

LOCOMO_ONLY_DATA = ("limit", "runs", "errata", "categories_from", "setting", "reference")
"""``data.*`` settings a stored LoCoMo-Plus run does not read: refused, never ignored."""

PlusRunResult = JobResult
"""What one LoCoMo-Plus job produced (the pipeline's :class:`JobResult`)."""


def check_settings(cfg: ExperimentConfig) -> None:
    """Refuse settings a stored LoCoMo-Plus run cannot honour, in one line.

    Raises:
        ValueError: an unknown ``judge.parser`` or a LoCoMo-only ``data.*`` setting.
    """
    parser = str(cfg.judge.parser)
    if parser not in PARSERS:
        raise ValueError(f"judge.parser={parser}: unknown parser. Available: "
                         f"{', '.join(PARSERS)}")
    given = [f"data.{name}={getattr(cfg.data, name)}" for name in LOCOMO_ONLY_DATA
             if getattr(cfg.data, name) is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not available for a stored LoCoMo-Plus run, "
                         "which is scored whole; drop the setting")


@dataclass(frozen=True)
class PlusJudged:
    """What the judge gave a LoCoMo-Plus run.

    Attributes:
        result: the judge engine's result (a dry run's estimate, or every item's runs).
        readings: both parsers' scores, ``None`` for a dry run.
        f1: every item's token F1 with ``scorer=both`` (also for a dry run: no call needed),
            else ``None``.
        trust: the audit, labels and panel (:mod:`.audit`), ``None`` when none was asked.
    """

    result: JudgeRunResult
    readings: JudgedReadings | None
    f1: PlusF1 | None = None
    trust: TrustSummary | None = None


class PlusSteps(JobSteps[StoredRun, PlusJudged]):
    """LoCoMo-Plus's hooks for the pipeline: reader, item judge, both readings, names."""

    def check_settings(self, cfg: ExperimentConfig) -> None:
        """:func:`check_settings`.

        Raises:
            ValueError: as :func:`check_settings`.
        """
        check_settings(cfg)

    def judge_config(self, cfg: ExperimentConfig) -> JudgeConfig | None:
        """Every category judged (:func:`.judged.judge_config`), or ``None`` without a judge.

        Raises:
            ValueError: a LoCoMo ``judge.protocol``.
        """
        return judge_config(cfg.judge) if cfg.scorer.uses_judge else None

    def read(self, cfg: ExperimentConfig, path: Path, start_dir: Path, *, judging: bool
             ) -> StoredRun:
        """Read the stored run (:func:`.runs.read_stored_run`; verdicts optional when judging).

        With ``scorer=both`` every factual item needs a gold answer for its F1
        (:func:`.f1.check_gold`), checked here, before any call.
        A judged run's trust checks (``judge.audit``, ``judge.labels``, ``judge.panel``) are
        planned here, before any call: a bad labels file or panel preset is refused in one
        line with nothing written or paid (controls: :mod:`.audit`).

        Raises:
            DataValidationError: a bad run file (one line: file, record, field).
            JudgeError: a bad trust option (one line naming it).
        """
        run = read_stored_run(path, judging=judging)
        if cfg.scorer.name is ScorerName.both:
            check_gold(run)
        if not judging:
            return run
        plan = plugin_trust.plan_plugin_trust(
            judge_records(run.rows), judge_config(cfg.judge), start_dir=start_dir,
            source=str(path), answer_categories=CONTROL_CATEGORIES)
        return replace(run, trust_plan=plan)

    def judge_records(self, inp: StoredRun, judge: JudgeConfig) -> list[QARecord]:
        """One record per item (:func:`.judged.judge_records`)."""
        return judge_records(inp.rows)

    def spend_parts(self, inp: StoredRun, judge: JudgeConfig, cfg: ExperimentConfig
                    ) -> list[Part]:
        """The items, then the audit's controls and each panel member, for the spend cap."""
        records = judge_records(inp.rows)
        return [("item", records, judge),
                *plugin_trust.trust_parts(inp.trust_plan, records, judge)]

    def judge(self, inp: StoredRun, judge: JudgeConfig, ctx: JobContext) -> PlusJudged:
        """Judge every item (or count the calls: ``judge.dry_run``); read both parsers.

        With ``scorer=both`` the factual items' F1 too (``f1.variant``, :func:`.f1.score_f1`).
        """
        from locomo_exp.judge import run_judge

        result = run_judge(judge_records(inp.rows), judge, start_dir=ctx.start_dir,
                           client=ctx.client, calls_stop=ctx.calls_stop, spend=ctx.spend,
                           prompts=ctx.prompts, cache=ctx.cache)
        dry = result.dry_run_estimate is not None
        f1 = (score_f1(inp, ctx.cfg.f1.variant.value)
              if ctx.cfg.scorer.name is ScorerName.both else None)
        return PlusJudged(result, None if dry else read_judged(inp.rows, result), f1)

    def trust(self, inp: StoredRun, judged: PlusJudged, ctx: JobContext) -> PlusJudged:
        """The audit controls, the labels' agreement and corrected accuracy, the panel.

        Judged with the items' judge, cache, client and spend cap
        (:func:`locomo_exp.benchmarks.plugin_trust.run_plugin_trust`); a dry run prices them.
        """
        trust = plugin_trust.run_plugin_trust(
            inp.trust_plan, judge_records(inp.rows), judge_config(ctx.cfg.judge), judged.result,
            ctx, category_names=LOCOMO_PLUS.kind_ids)
        return judged if trust is None else replace(judged, trust=trust)

    def summary(self, inp: StoredRun, judged: PlusJudged | None, cfg: ExperimentConfig
                ) -> dict[str, Any]:
        """Both readings' figures (:mod:`.summary`)."""
        parser, samples, seed = str(cfg.judge.parser), cfg.report.bootstrap_samples, cfg.report.seed
        if judged is None:
            return build_summary(inp, parser=parser, samples=samples, seed=seed)
        section = judge_section(judged.result)
        if judged.result.dry_run_estimate is not None:
            section["dry_run"] = dict(judged.result.dry_run_estimate)
        if judged.trust is not None:
            section["trust"] = plugin_trust.trust_section(judged.trust)
        return build_judged_summary(
            inp, parser=parser, samples=samples, seed=seed, judge=section,
            readings=judged.readings,
            f1=None if judged.f1 is None else f1_section(inp, judged.f1))

    def score_rows(self, inp: StoredRun, judged: PlusJudged | None) -> list[dict[str, Any]]:
        """One row per item: stored verdicts, or the judge's replies and both readings.

        With ``scorer=both`` each row also has ``f1_<variant>`` (0-1; ``None`` with
        ``f1_unscored`` giving the reason on a Cognitive item).
        """
        if judged is None or judged.readings is None:
            return score_rows(inp)
        rows = judged_score_rows(inp.rows, judged.result, judged.readings)
        if judged.f1 is not None:
            key = f"f1_{judged.f1.variant}"
            for row, f1 in zip(rows, judged.f1.scores, strict=True):
                row[key] = f1
                row["f1_unscored"] = NO_GOLD if f1 is None else None
        return rows

    def question_rows(self, rows: list[dict[str, Any]], judge_model: str | None
                      ) -> list[QuestionRow]:
        """Its rows as question rows (:func:`.questions.plus_question_rows`)."""
        from locomo_exp.benchmarks.locomo_plus.questions import plus_question_rows

        return plus_question_rows(rows, judge_model)

    def card(self, summary: dict[str, Any]) -> dict[str, Any]:
        """``card.json`` (:func:`.summary.build_card`)."""
        return build_card(summary)

    def report(self, summary: dict[str, Any], card: dict[str, Any]) -> str:
        """``report.md`` (:func:`.report.render_report`, the trust sections included)."""
        return render_report(summary, card)

    def console(self, summary: dict[str, Any]) -> list[str]:
        """The console's figures (:func:`.report.render_console`), then the trust lines."""
        trust = (summary.get("judge") or {}).get("trust")
        return [*render_console(summary),
                *plugin_trust.trust_console_lines(trust, unit="item")]

    def gate(self, summary: dict[str, Any]) -> str | None:
        """The judge audit's gate (``judge.audit.max_false_accept`` ...) when it failed."""
        return plugin_trust.trust_gate((summary.get("judge") or {}).get("trust"))

    def run_tags(self, summary: dict[str, Any]) -> dict[str, str]:
        """:func:`.tracking.run_tags`."""
        return plus_tracking.run_tags(summary)

    def run_params(self, summary: dict[str, Any]) -> dict[str, str]:
        """:func:`.tracking.run_params`."""
        return plus_tracking.run_params(summary)

    def run_metrics(self, summary: dict[str, Any]) -> dict[str, float]:
        """:func:`.tracking.run_metrics` (percent), and the trust checks' (LoCoMo's names)."""
        trust = (summary.get("judge") or {}).get("trust")
        return {**plus_tracking.run_metrics(summary),
                **plugin_trust.trust_run_metrics(trust, LOCOMO_PLUS.kind_ids)}

    def end_tags(self, summary: dict[str, Any], console: list[str]) -> dict[str, str]:
        """The console's figures as the run's note, and the warnings."""
        from locomo_exp import tracking

        return {tracking.NOTE_TAG: "\n".join(console),
                **tracking.warning_tags(summary["warnings"])}


STEPS = PlusSteps(NAME, TITLE, "run file")
"""LoCoMo-Plus's hooks, as the pipeline runs them."""


def run_locomo_plus(cfg: ExperimentConfig, output_dir: Path, start_dir: Path | None = None,
                    *, client: JudgeClient | None = None, run_name: str | None = None,
                    parent_run_id: str | None = None,
                    extra_tags: dict[str, str] | None = None) -> JobResult:
    """Score a LoCoMo-Plus run: its stored verdicts (no judge call), or judge it.

    The pipeline's job (:func:`locomo_exp.benchmarks.pipeline.run_job`) over :data:`STEPS`.
    With ``scorer=judge`` each item gets ``judge.runs`` judge calls, read by both parsers;
    ``judge.dry_run`` counts and prices them; ``scorer=both`` adds the factual items' F1.

    Args:
        cfg: the typed config (``data.path``, ``judge.parser``, ``report``, ``tracking``).
        output_dir: where to write the outputs.
        start_dir: the directory relative paths are resolved against (default: cwd).
        client: a judge client to use instead of the provider's SDK (tests).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file stem> · locomo_plus``).
        parent_run_id: nest the MLflow run under this one (a sweep's parent run).
        extra_tags: more MLflow tags (a sweep job's number and swept values).

    Returns:
        :class:`~locomo_exp.benchmarks.steps.JobResult`.

    Raises:
        DataValidationError: a bad run file (one line: file, record, field).
        ValueError: several files, unavailable settings, an unknown parser.
        JudgeError: also the whole job's estimate above ``judge.max_cost_usd`` (nothing
            written, no call made).
        locomo_exp.report.run_dir.OutputDirInUse / OutputDirNotWritable: as for LoCoMo runs.
        locomo_exp.tracking.TrackingStoreError: a ``tracking.uri`` MLflow cannot use.
    """
    return run_job(STEPS, cfg, output_dir, start_dir, client=client, run_name=run_name,
                   parent_run_id=parent_run_id, extra_tags=extra_tags)


__all__ = ["STEPS", "PlusJudged", "PlusRunResult", "PlusSteps", "check_settings",
           "run_locomo_plus"]
