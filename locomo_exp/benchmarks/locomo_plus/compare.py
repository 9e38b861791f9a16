"""``mode=compare`` of two LoCoMo-Plus runs: paired by item, clustered by conversation.

Each run directory is one this package wrote (``summary.json`` with ``benchmark:
locomo_plus``, ``scores.jsonl``). Items are paired by ``item_id``, with each run's headline
reading (``judge.parser`` of the run: ``score`` or ``score_authors``); an item unscored in
either run is left out of the pairs and counted. Two groups are compared separately, the
Cognitive items and the factual ones (the five LoCoMo categories, item-weighted), each with:

- the mean of each run and the paired difference A - B (0-1);
- a 95% percentile interval of the difference by the cluster bootstrap over LoCoMo
  conversations (:func:`locomo_exp.stats.bootstrap.cluster_bootstrap_mean_diff`), or, when
  a run does not record every item's conversation, by the question bootstrap (said so);
- a paired sign-flip test (:func:`locomo_exp.stats.paired.sign_flip_test`; exact when
  ``2**n`` is within ``compare.permutation_samples``), Holm-adjusted over the two groups.

When both runs scored F1 (``scorer=both``) with the same ``f1.variant``, each factual
category is also compared on F1 (``scores.jsonl``'s ``f1_<variant>``, 0-1): the paired
difference A - B with the same cluster bootstrap over conversations and sign-flip test,
Holm-adjusted over the five categories; otherwise the F1 comparison says why it is not
measured. The Cognitive items have no gold answer, so no F1.

Outputs: ``compare.json`` and ``compare.md`` in the output directory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.file_plugin import claims_run_dirs, compare_run_dirs
from locomo_exp.benchmarks.locomo_plus.facts import COGNITIVE, FACTUAL, NAME
from locomo_exp.benchmarks.locomo_plus.parsing import AUTHORS
from locomo_exp.config import ExperimentConfig
from locomo_exp.report.run_dir import atomic_write_text, check_writable, prepare_output_dir
from locomo_exp.results.run_log import check_version
from locomo_exp.stats.bootstrap import cluster_bootstrap_mean_diff, question_bootstrap_mean_diff
from locomo_exp.stats.paired import holm_adjust, sign_flip_test

GROUPS: dict[str, tuple[str, ...]] = {"Cognitive": (COGNITIVE,), "factual": FACTUAL}
"""The compared groups: Cognitive, and the five LoCoMo categories together."""



@dataclass(frozen=True)
class PlusRunScores:
    """One run's scores, as the comparison reads them.

    Attributes:
        path: the run directory.
        reading: the run's headline reading (``ours`` or ``authors``).
        scores: item id -> ``(category, conversation, score)``; score ``None`` when unscored.
        f1_variant: the run's ``f1.variant`` with ``scorer=both``, else ``None``.
        f1: item id -> ``(category, conversation, F1 0-1)`` with ``scorer=both`` (F1
            ``None`` for a Cognitive item), else ``None``.
    """

    path: Path
    reading: str
    scores: dict[str, tuple[str, int | None, float | None]]
    f1_variant: str | None = None
    f1: dict[str, tuple[str, int | None, float | None]] | None = None


def claims_runs(cfg: ExperimentConfig, start_dir: Path) -> bool:
    """Whether every ``compare.runs`` entry is a LoCoMo-Plus run directory."""
    return claims_run_dirs(cfg, start_dir, NAME)


def read_run(path: Path) -> PlusRunScores:
    """Read a LoCoMo-Plus run directory's headline scores.

    Raises:
        ValueError: a missing or malformed ``scores.jsonl`` (one line naming the file and
            the line).
    """
    summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    check_version(summary, str(path / "summary.json"))  # a newer layout: one line
    reading = str(summary.get("headline", "ours"))
    field = "score_authors" if reading == AUTHORS else "score"
    variant = (summary.get("f1") or {}).get("variant")
    f1_field = None if variant is None else f"f1_{variant}"
    scores: dict[str, tuple[str, int | None, float | None]] = {}
    f1: dict[str, tuple[str, int | None, float | None]] = {}
    file = path / "scores.jsonl"
    if not file.is_file():
        raise ValueError(f"{file}: missing; compare needs the run's scores.jsonl")
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
            score = row[field]
            key = (str(row["category"]), row.get("conversation"))
            scores[str(row["item_id"])] = (*key, None if score is None else float(score))
            if f1_field is not None:
                value = row[f1_field]
                f1[str(row["item_id"])] = (*key, None if value is None else float(value))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{file}: line {number}: not a LoCoMo-Plus score row "
                             f"({error})") from None
    return PlusRunScores(path, reading, scores, variant, f1 if f1_field is not None else None)


def compare_group(a: PlusRunScores, b: PlusRunScores, categories: tuple[str, ...], *,
                  samples: int, permutations: int, seed: int) -> dict[str, Any]:
    """The paired comparison of one group of items on the headline readings' scores.

    Args:
        a: run A.
        b: run B.
        categories: the group's category strings.
        samples: bootstrap resamples.
        permutations: the sign-flip test's Monte Carlo budget.
        seed: the seed of both.

    Returns:
        As :func:`compare_scores`.
    """
    return compare_scores(a.scores, b.scores, categories, samples=samples,
                          permutations=permutations, seed=seed)


def compare_scores(a_scores: dict[str, tuple[str, int | None, float | None]],
                   b_scores: dict[str, tuple[str, int | None, float | None]],
                   categories: tuple[str, ...], *, samples: int, permutations: int,
                   seed: int) -> dict[str, Any]:
    """The paired comparison of one group of items on one score (label score or F1).

    Args:
        a_scores: run A's item id -> ``(category, conversation, score 0-1)``.
        b_scores: run B's.
        categories: the group's category strings.
        samples: bootstrap resamples.
        permutations: the sign-flip test's Monte Carlo budget.
        seed: the seed of both.

    Returns:
        ``{n_pairs, unpaired, mean_a, mean_b, difference, ci, unit, clusters, test,
        pvalue}`` (0-1 figures); ``n_pairs`` 0 and ``None`` figures when nothing pairs.
    """
    ids = [i for i, (cat, _, _) in a_scores.items() if cat in categories]
    ids_b = {i for i, (cat, _, _) in b_scores.items() if cat in categories}
    pairs = [i for i in ids if i in ids_b and a_scores[i][2] is not None
             and b_scores[i][2] is not None]
    unpaired = len(set(ids) | ids_b) - len(pairs)
    out: dict[str, Any] = {"n_pairs": len(pairs), "unpaired": unpaired, "mean_a": None,
                           "mean_b": None, "difference": None, "ci": None, "unit": None,
                           "clusters": None, "test": None, "pvalue": None}
    if not pairs:
        return out
    xa = [float(a_scores[i][2]) for i in pairs]  # type: ignore[arg-type]
    xb = [float(b_scores[i][2]) for i in pairs]  # type: ignore[arg-type]
    convs = [a_scores[i][1] if a_scores[i][1] is not None else b_scores[i][1] for i in pairs]
    if all(c is not None for c in convs):
        interval = cluster_bootstrap_mean_diff(xa, xb, convs, n_resamples=samples, seed=seed)
    else:
        interval = question_bootstrap_mean_diff(xa, xb, n_resamples=samples, seed=seed)
    test = sign_flip_test(xa, xb, n_resamples=permutations, seed=seed)
    out.update(mean_a=sum(xa) / len(xa), mean_b=sum(xb) / len(xb),
               difference=interval.estimate, ci=[interval.low, interval.high],
               unit=interval.unit, clusters=interval.n_units, test=test.test,
               pvalue=test.pvalue)
    return out


def compare_runs(a: PlusRunScores, b: PlusRunScores, *, samples: int, permutations: int,
                 seed: int) -> dict[str, Any]:
    """Both groups' comparisons, Holm-adjusted over the two (``compare.json``'s content)."""
    groups = {name: compare_group(a, b, cats, samples=samples, permutations=permutations,
                                  seed=seed) for name, cats in GROUPS.items()}
    _holm(groups)
    return {"benchmark": NAME, "runs": [str(a.path), str(b.path)],
            "readings": [a.reading, b.reading], "difference": "A - B (0-1)",
            "groups": groups, "f1": compare_f1(a, b, samples=samples,
                                               permutations=permutations, seed=seed)}


def _holm(groups: dict[str, dict[str, Any]]) -> None:
    adjusted = holm_adjust([g["pvalue"] for g in groups.values()])
    for group, p in zip(groups.values(), adjusted, strict=True):
        group["pvalue_holm"] = p


def compare_f1(a: PlusRunScores, b: PlusRunScores, *, samples: int, permutations: int,
               seed: int) -> dict[str, Any]:
    """Each factual category's paired F1 comparison, when both runs scored the same F1.

    Args:
        a: run A.
        b: run B.
        samples: bootstrap resamples.
        permutations: the sign-flip test's Monte Carlo budget.
        seed: the seed of both.

    Returns:
        ``{"variant", "by_category": {category: ...}}`` with each category's
        :func:`compare_scores` result (F1 0-1, difference A - B, 95% cluster-bootstrap
        interval over conversations) and ``pvalue_holm`` over the five categories; or
        ``{"variant": None, "not_measured": why}`` when a run has no F1 (not ``scorer=both``)
        or the two used different ``f1.variant``.
    """
    if a.f1 is None or b.f1 is None:
        missing = " and ".join(str(r.path) for r in (a, b) if r.f1 is None)
        return {"variant": None, "not_measured": f"{missing}: no F1 (run with scorer=both)"}
    if a.f1_variant != b.f1_variant:
        return {"variant": None, "not_measured": f"different F1 variants ({a.f1_variant} vs "
                                                 f"{b.f1_variant}): not comparable"}
    groups = {cat: compare_scores(a.f1, b.f1, (cat,), samples=samples,
                                  permutations=permutations, seed=seed) for cat in FACTUAL}
    measured = {cat: g for cat, g in groups.items() if g["pvalue"] is not None}
    _holm(measured)
    for group in groups.values():
        group.setdefault("pvalue_holm", None)
    return {"variant": a.f1_variant, "by_category": groups}


def _pct(value: float | None) -> str:
    return "not measured" if value is None else f"{value * 100:.1f}%"


def render_lines(result: dict[str, Any], labels: tuple[str, str]) -> list[str]:
    """The console lines (and the body of ``compare.md``) of a comparison."""
    lines = [f"LoCoMo-Plus comparison: A = {labels[0]}, B = {labels[1]} "
             f"(readings {result['readings'][0]} / {result['readings'][1]})"]
    for name, g in result["groups"].items():
        if not g["n_pairs"]:
            lines.append(f"  {name}: no paired items; not measured")
            continue
        unit = ("by conversation" if g["unit"] == "conversation"
                else "by item: a run does not record every item's conversation")
        unpaired = f" ({g['unpaired']} unpaired)" if g["unpaired"] else ""
        lines.append(
            f"  {name}: A {_pct(g['mean_a'])}, B {_pct(g['mean_b'])}, A - B "
            f"{g['difference'] * 100:+.1f} points, 95% CI {g['ci'][0] * 100:+.1f} to "
            f"{g['ci'][1] * 100:+.1f} ({unit}, {g['clusters']} units), n={g['n_pairs']}"
            f"{unpaired}; {g['test']} p={g['pvalue']:.4f} (Holm {g['pvalue_holm']:.4f})")
    return lines + _f1_lines(result.get("f1"))


def _f1_lines(f1: dict[str, Any] | None) -> list[str]:
    """The F1 comparison's lines, one per factual category (none for an older file)."""
    if f1 is None:
        return []
    if f1.get("variant") is None:
        return [f"  F1: not measured ({f1['not_measured']})"]
    lines = [f"  F1 ({f1['variant']}), factual categories, Holm over the five:"]
    for cat, g in f1["by_category"].items():
        if not g["n_pairs"]:
            lines.append(f"    {cat}: no paired items; not measured")
            continue
        lines.append(
            f"    {cat}: A {g['mean_a']:.4f}, B {g['mean_b']:.4f}, A - B "
            f"{g['difference']:+.4f}, 95% CI {g['ci'][0]:+.4f} to {g['ci'][1]:+.4f} "
            f"(by {g['unit']}, {g['clusters']} units), n={g['n_pairs']}; {g['test']} "
            f"p={g['pvalue']:.4f} (Holm {g['pvalue_holm']:.4f})")
    return lines


def compare_markdown(lines: list[str]) -> str:
    """The text of ``compare.md`` from a comparison's console lines (:func:`render_lines`)."""
    return ("# " + lines[0] + "\n\n"
            + "\n".join(f"- {line.strip()}" for line in lines[1:]) + "\n")


def run_plus_compare(cfg: ExperimentConfig, output_dir: Path, start_dir: Path
                     ) -> tuple[list[str], dict[str, Any]]:
    """Compare the two LoCoMo-Plus runs of ``compare.runs``; write ``compare.json``/``.md``.

    Returns:
        The console lines, and the comparison as written to ``compare.json``.

    Raises:
        ValueError: not exactly two runs, or a malformed run.
    """
    dirs = compare_run_dirs(cfg, start_dir)
    if len(dirs) != 2:
        raise ValueError(f"compare.runs: a LoCoMo-Plus comparison takes exactly two runs, "
                         f"got {len(dirs)}")
    check_writable(output_dir)
    a, b = (read_run(path) for path in dirs)
    result = compare_runs(a, b, samples=cfg.compare.bootstrap_samples,
                          permutations=cfg.compare.permutation_samples, seed=cfg.compare.seed)
    labels = tuple(cfg.compare.labels or [str(r) for r in cfg.compare.runs])
    lines = render_lines(result, (labels[0], labels[1]))
    prepare_output_dir(output_dir, cfg.overwrite)
    atomic_write_text(output_dir / "compare.json", json.dumps(result, indent=2) + "\n")
    atomic_write_text(output_dir / "compare.md", compare_markdown(lines))
    return [*lines, "", f"Comparison: {output_dir / 'compare.md'}"], result
