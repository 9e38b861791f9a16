"""A finished comparison: :class:`CompareResult` and its :class:`PairInfo` per pair.

A module of its own so that the comparison (:mod:`.comparison`) and its outputs
(:mod:`.render`) share the types without importing each other.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.compare.engine import QUESTION, CompareRow
from locomo_exp.compare.run_data import RunData
from locomo_exp.results.checks_read import run_warnings
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS


def stored_field(run: RunData) -> str | None:
    """The input field a run's stored verdicts were read from (``llm_score``, ``grade``...)."""
    field = (run.summary.get("input") or {}).get("judge_field")
    return str(field) if field else None


def stored_fields_warning(runs: list[RunData]) -> str | None:
    """The warning for runs whose stored J was read from different input fields.

    Different field names say only that the files come from different harnesses; who
    judged (model, prompt) is not in the files, so the line says what is known.

    Args:
        runs: the compared runs (only those carrying stored J count).

    Returns:
        One line, or ``None`` when fewer than two distinct fields.
    """
    fields = list(
        dict.fromkeys(f for run in runs if "stored_j" in run.values if (f := stored_field(run)))
    )
    if len(fields) < 2:
        return None
    return (
        f"stored J read from different fields ({' vs '.join(fields)}): the judges' "
        "prompts/models may differ; not verified. A stored-J difference may mix the systems "
        "with their judges: re-judge both with one judge (scorer=judge) for a like-for-like J"
    )


@dataclass
class PairInfo:
    """One compared pair: its matching counts and card checks.

    Attributes:
        run_a, run_b: display names (differences are A - B).
        counts: :meth:`Matching.counts` (shared, only_a, only_b, overlap, matched_by...).
        low_overlap: overlap below ``min_overlap``.
        mismatches: blocking card differences (present only with ``allow_mismatch``).
        differences: every differing card field.
        forest_plot: the pair's PNG file name, once written.
        dropped: metrics asked for that this pair has no row for, each with the reason.
    """

    run_a: str
    run_b: str
    counts: dict[str, Any]
    low_overlap: bool
    mismatches: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    forest_plot: str | None = None
    dropped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return dict(self.__dict__)


@dataclass
class CompareResult:
    """A finished comparison.

    Attributes:
        runs: the loaded runs, in ``compare.runs`` order.
        pairs: compared pairs.
        rows: every row (after Holm), pair by pair.
        alpha: level of the verdicts; min_overlap: overlap flag threshold.
        category_names: display names keyed by ``"1"``..``"5"`` (from run A's summary).
        outputs: written files (``json``, ``markdown``, ``forest_<k>``).
        settings: the comparison's settings (for ``compare.json``).
    """

    runs: list[RunData]
    pairs: list[PairInfo]
    rows: list[CompareRow]
    alpha: float
    min_overlap: float
    category_names: dict[str, str]
    outputs: dict[str, Path] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        """What the reader must know before reading a row, one line each.

        The one list: the console prints it (``warning:`` lines) and ``compare.md`` renders
        it (its Warnings section). Stored J read from different fields; each run's notes
        (stored J recovered or not); each run's judge-check warnings (J inflated, J
        deflated...: what its own report opens with); per pair: golds or categories that differ, a
        comparison made only because of ``allow_mismatch``, an overlap below
        ``min_overlap``, card fields that differ, metrics dropped; rows without a cluster
        interval.
        """
        out: list[str] = []
        fields = stored_fields_warning(self.runs)
        if fields:
            out.append(fields)
        out += [f"{run.name}: {note}" for run in self.runs for note in run.notes]
        out += [
            f"{run.name}: its J is flagged by its own judge checks (its report opens with "
            f"them; a J difference with this run is not trustworthy): {warning}"
            for run in self.runs
            for warning in run_warnings(run.summary)
        ]
        for pair in self.pairs:
            where = f"{pair.run_a} vs {pair.run_b}"
            counts = pair.counts
            if pair.low_overlap:
                out.append(
                    f"{where}: only {100 * counts['overlap']:.1f}% of questions shared (below "
                    f"{100 * self.min_overlap:.0f}%): the runs answer different question sets"
                )
            if counts.get("category_mismatches"):
                out.append(
                    f"{where}: {counts['category_mismatches']} shared questions have different "
                    "categories (A's used)"
                )
            allowed = "compared only because allow_mismatch=true"
            out += [f"{where}: {allowed}: {m}" for m in pair.mismatches]
            out += [f"{where}: card fields differ: {d}" for d in pair.differences]
            out += [f"{where}: {d}" for d in pair.dropped]
        # one line per pair and note, naming the rows it applies to (a note shared by every
        # row, such as "1 conversation", is said once instead of once per metric x group)
        rows_by_note: dict[tuple[str, str], list[str]] = {}
        for r in self.rows:
            if r.note:
                rows_by_note.setdefault((f"{r.run_a} vs {r.run_b}", r.note), []).append(
                    f"{r.metric} {r.group}"
                )
        n_rows = {
            where: sum(1 for r in self.rows if f"{r.run_a} vs {r.run_b}" == where)
            for where, _ in rows_by_note
        }
        for (where, note), names in sorted(rows_by_note.items()):
            covered = "every row" if len(names) == n_rows[where] else ", ".join(names)
            out.append(f"{where}: {covered}: {note}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``compare.json`` content (values in points, 0-100)."""
        return {
            "settings": self.settings,
            "runs": [
                {
                    "name": r.name,
                    "path": str(r.path),
                    "n_questions": len(r.rows),
                    "card": r.card,
                    "notes": r.notes,
                    "warnings": run_warnings(r.summary),
                }
                for r in self.runs
            ],
            "pairs": [p.to_dict() for p in self.pairs],
            "rows": [r.to_dict() for r in self.rows],
        }

    def _mlflow_prefix(self, row: CompareRow) -> str:
        """``compare/<A>_vs_<B>/<metric>/<group>``, sanitised to MLflow's character set."""
        pair = re.sub(r"[^A-Za-z0-9_\-. :]+", "_", f"{row.run_a}_vs_{row.run_b}")
        return f"compare/{pair.replace('..', '_')}/{row.metric}/{row.group}"

    def mlflow_metrics(self) -> dict[str, float]:
        """Finite differences, bounds and adjusted p-values as MLflow metric names.

        Names: ``compare/<A>_vs_<B>/<metric>/<group>/diff`` (``ci_low``, ``ci_high``:
        the conversation-cluster interval, ``p_holm``), sanitised to MLflow's character
        set; values in points. A bound that was not measured (fewer than
        :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations) is not
        logged: :meth:`mlflow_params` says why.
        """
        out: dict[str, float] = {}
        for row in self.rows:
            prefix = self._mlflow_prefix(row)
            for name, value in (
                ("diff", row.diff),
                ("ci_low", row.cluster_ci[0]),
                ("ci_high", row.cluster_ci[1]),
                ("p_holm", row.p_holm),
            ):
                if value is not None and math.isfinite(value):
                    out[f"{prefix}/{name}"[:250]] = float(value)
        return out

    def _unmeasured(self) -> list[tuple[CompareRow, str]]:
        """Rows without a conversation-cluster interval, each with why it was not measured."""
        return [
            (row, f"not measured: {row.n_conversations} conversations < {MIN_RUN_CLUSTERS}")
            for row in self.rows
            if row.interval == QUESTION
        ]

    def mlflow_params(self) -> dict[str, str]:
        """Why a row's ``ci_low``/``ci_high`` metrics are absent, as MLflow params.

        Returns:
            ``compare/<A>_vs_<B>/<metric>/<group>/ci`` -> ``"not measured: 2 conversations
            < 5"`` for every row with fewer than
            :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations (the
            cluster bootstrap's threshold); empty when every interval was measured.
        """
        return {f"{self._mlflow_prefix(row)}/ci"[:250]: why for row, why in self._unmeasured()}

    def mlflow_description(self) -> str:
        """The comparison run's description: which intervals were not measured, and why.

        Returns:
            One paragraph per reason, e.g. ``"ci_low/ci_high not logged for 12 of 12 rows
            (f1_locomo overall, ...): not measured: 2 conversations < 5; a
            conversation-cluster interval needs at least 5, so these rows' verdicts use the
            question-level paired interval (compare.md, compare.json)."``; ``""`` when
            every interval was measured.
        """
        by_reason: dict[str, list[CompareRow]] = {}
        for row, why in self._unmeasured():
            by_reason.setdefault(why, []).append(row)
        paragraphs = []
        for why, rows in by_reason.items():
            names = ", ".join(f"{row.metric} {row.group}" for row in rows[:6])
            more = ", ..." if len(rows) > 6 else ""
            paragraphs.append(
                f"ci_low/ci_high not logged for {len(rows)} of {len(self.rows)} rows "
                f"({names}{more}): {why}; a conversation-cluster interval needs at least "
                f"{MIN_RUN_CLUSTERS}, so these rows' verdicts use the question-level paired "
                "interval (compare.md, compare.json)."
            )
        return "\n\n".join(paragraphs)

    def mlflow_tags(self) -> dict[str, str]:
        """``compare.run.<i>`` -> run directory, and the MLflow run ids the cards carry."""
        tags = {f"compare.run.{i}": str(r.path) for i, r in enumerate(self.runs)}
        for i, run in enumerate(self.runs):
            mlflow_id = (
                (run.card.get("mlflow") or {}).get("run_id") if isinstance(run.card, dict) else None
            )
            if mlflow_id:
                tags[f"compare.mlflow_run.{i}"] = str(mlflow_id)
        return tags


__all__ = ["CompareResult", "PairInfo", "stored_field", "stored_fields_warning"]
