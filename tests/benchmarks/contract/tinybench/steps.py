"""tinybench's hooks: reader, judge records (``binary`` protocol), accuracy per kind, names."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.steps import JobContext, JobSteps
from locomo_exp.config import ExperimentConfig, JudgeConfig
from locomo_exp.data.input_file import DataValidationError, RecordProblem
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.results import QARecord

KINDS = {"recall": 1, "update": 2}
"""Kind -> the code the judge engine selects by (the kind travels as ``question_type``)."""
FIELDS = ("id", "kind", "question", "answer", "prediction")


def _problem(path: Path, index: int, field: str, what: str) -> DataValidationError:
    return DataValidationError([RecordProblem(str(path), f"[{index}]", field, what)])


class TinySteps(JobSteps[list[dict[str, Any]], JudgeRunResult]):
    """Accuracy (0-1) overall and per kind, of stored verdicts or of the judge's."""

    def judge_config(self, cfg: ExperimentConfig) -> JudgeConfig | None:
        """The ``binary`` protocol over both kinds (``scorer=judge``)."""
        if not cfg.scorer.uses_judge:
            return None
        return replace(cfg.judge, protocol="binary", categories=sorted(KINDS.values()))

    def read(self, cfg: ExperimentConfig, path: Path, start_dir: Path, *, judging: bool
             ) -> list[dict[str, Any]]:
        """The questions; one line naming file, record and field for a bad one."""
        rows = json.loads(path.read_text(encoding="utf-8"))["tinybench"]
        for i, row in enumerate(rows):
            for name in FIELDS:
                if not isinstance(row.get(name), str):
                    raise _problem(path, i, name, "missing or not a string")
            if row["kind"] not in KINDS:
                raise _problem(path, i, "kind", f"must be one of {', '.join(KINDS)}")
            if not judging and not isinstance(row.get("verdict"), bool):
                raise _problem(path, i, "verdict", "missing or not true/false (or scorer=judge)")
        return list(rows)

    def judge_records(self, inp: list[dict[str, Any]], judge: JudgeConfig) -> list[QARecord]:
        """One record per question."""
        return [QARecord(question_id=r["id"], question=r["question"], ground_truth=r["answer"],
                         prediction=r["prediction"], category=KINDS[r["kind"]], position=i,
                         question_type=r["kind"]) for i, r in enumerate(inp)]

    def judge(self, inp: list[dict[str, Any]], judge: JudgeConfig, ctx: JobContext
              ) -> JudgeRunResult:
        """The judge engine over every question (cache, batch, dry run: the engine's)."""
        from locomo_exp.judge import run_judge

        return run_judge(self.judge_records(inp, judge), judge, start_dir=ctx.start_dir,
                         client=ctx.client, calls_stop=ctx.calls_stop, spend=ctx.spend,
                         prompts=ctx.prompts,  # the preflight's prompts: each built once
                         cache=ctx.cache)  # the preflight's cache: opened once

    def _scores(self, inp: list[dict[str, Any]], judged: JudgeRunResult | None
                ) -> list[float | None]:
        if judged is None:
            return [1.0 if r["verdict"] else 0.0 for r in inp]
        means = [(judged.per_question.get(r["id"]) or None) for r in inp]
        return [None if m is None or m.mean_score is None else m.mean_score / 100 for m in means]

    def summary(self, inp: list[dict[str, Any]], judged: JudgeRunResult | None,
                cfg: ExperimentConfig) -> dict[str, Any]:
        """``accuracy``: the mean score overall and per kind (0-1), ``None`` when unscored."""
        scores = self._scores(inp, judged)

        def mean(kind: str | None) -> float | None:
            got = [s for s, r in zip(scores, inp, strict=True)
                   if s is not None and kind in (None, r["kind"])]
            return round(sum(got) / len(got), 6) if got else None

        out: dict[str, Any] = {
            "benchmark": self.name, "n_questions": len(inp),
            "verdicts": "stored" if judged is None else "judge",
            "accuracy": {"overall": mean(None), **{k: mean(k) for k in KINDS}},
            "warnings": [],
        }
        if judged is not None:
            keep = ("protocol", "model", "mode", "counts", "tokens", "estimated_cost_usd")
            out["judge"] = {k: judged.summary[k] for k in keep if k in judged.summary}
            if judged.dry_run_estimate is not None:
                out["judge"]["dry_run"] = dict(judged.dry_run_estimate)
        return out

    def score_rows(self, inp: list[dict[str, Any]], judged: JudgeRunResult | None
                   ) -> list[dict[str, Any]]:
        """One row per question: id, kind, score (0-1 or ``None``)."""
        return [{"id": r["id"], "kind": r["kind"], "score": s}
                for r, s in zip(inp, self._scores(inp, judged), strict=True)]

    def card(self, summary: dict[str, Any]) -> dict[str, Any]:
        """The headline: accuracy and where the verdicts came from."""
        return {"benchmark": self.name, "verdicts": summary["verdicts"],
                "accuracy": summary["accuracy"]}

    def console(self, summary: dict[str, Any]) -> list[str]:
        """One line per figure, percent."""
        return [f"tinybench {k}: " + ("not measured" if v is None else f"{100 * v:.1f}%")
                for k, v in summary["accuracy"].items()]

    def report(self, summary: dict[str, Any], card: dict[str, Any]) -> str:
        """The console's lines as a markdown list."""
        return "# TinyBench\n\n" + "".join(f"- {x}\n" for x in self.console(summary))

    def paired_scores(self, rows: list[dict[str, Any]]
                      ) -> dict[str, tuple[str, float | None]]:
        """``mode=compare`` and sweeps pair runs by question id, grouped by kind."""
        return {r["id"]: (r["kind"], r["score"]) for r in rows}

    def run_params(self, summary: dict[str, Any]) -> dict[str, str]:
        """Where the verdicts came from."""
        return {"tinybench.verdicts": summary["verdicts"]}

    def run_metrics(self, summary: dict[str, Any]) -> dict[str, float]:
        """``tinybench/<figure>`` in percent (unmeasured figures left out)."""
        return {f"tinybench/{k}": 100 * v for k, v in summary["accuracy"].items()
                if v is not None}


STEPS = TinySteps("tinybench", "TinyBench", "questions file")
