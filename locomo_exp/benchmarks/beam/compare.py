"""``mode=compare`` of two BEAM runs: paired per question, clustered by chat, per ability.

Each run directory is one this package wrote (``summary.json`` with ``benchmark: beam``,
``scores.jsonl``). Questions are paired by ``question_id``; a question unscored in either
run (a beam-official event-ordering question of stored verdicts, a failed judging) is left
out of that profile's pairs and counted. For each profile both runs scored, and in it for
each ability and overall:

- the mean question score of each run and the paired difference A - B (0-1);
- a 95% percentile interval of the difference by the cluster bootstrap over chats
  (:func:`locomo_exp.stats.bootstrap.cluster_bootstrap_mean_diff`: the chat is the cluster,
  as BEAM's questions are nested in chats);
- a paired sign-flip test (:func:`locomo_exp.stats.paired.sign_flip_test`; exact when
  ``2**n`` is within ``compare.permutation_samples``), Holm-adjusted
  (:func:`locomo_exp.stats.paired.holm_adjust`) over the profile's abilities; the overall
  row is its own test, outside that family.

The comparison is marked NOT COMPARABLE, with the reasons, when the two runs' item verdicts
came from different judges, different judge prompts (profiles) or a different
``beam.strict``; each run's comparability with the published baselines is listed too.
Outputs: ``compare.json`` and ``compare.md`` in the output directory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import ABILITIES, NAME, TITLE, ability_title
from locomo_exp.benchmarks.file_plugin import claims_run_dirs, compare_run_dirs
from locomo_exp.config import ExperimentConfig
from locomo_exp.report.run_dir import atomic_write_text, check_writable, prepare_output_dir
from locomo_exp.results.run_log import check_version
from locomo_exp.stats.bootstrap import cluster_bootstrap_mean_diff
from locomo_exp.stats.paired import holm_adjust, sign_flip_test

PROFILES = (p.NUGGET, p.OFFICIAL)
OVERALL = "overall"


@dataclass(frozen=True)
class BeamRunScores:
    """One BEAM run's per-question scores, as the comparison reads them.

    Attributes:
        path: the run directory.
        verdict_prompt: the prompt profile the item verdicts were judged under
            (``beam-nugget`` for stored mem0 verdicts; the judged run's ``beam.profile``).
        strict: ``beam.strict`` of a judged official run.
        judge: the judge model of the item verdicts, or ``None`` when not named.
        baselines: published baseline (name, profile, judge) -> why this run's figures
            of the baseline's profile do not compare with it (``None``: comparable), from
            the run's ``summary.json``.
        scores: question id -> ``(ability, chat, {profile: score or None})``.
    """

    path: Path
    verdict_prompt: str
    strict: bool
    judge: str | None
    baselines: dict[str, str | None] = field(default_factory=dict)
    scores: dict[str, tuple[str, str, dict[str, float | None]]] = field(default_factory=dict)


def claims_runs(cfg: ExperimentConfig, start_dir: Path) -> bool:
    """Whether every ``compare.runs`` entry is a BEAM run directory."""
    return claims_run_dirs(cfg, start_dir, NAME)


def _profile_score(row: dict[str, Any], profile: str) -> float | None:
    block = row.get(profile)
    if block is None:
        return None
    score = block["score"]
    return None if score is None else float(score)


def read_run(path: Path) -> BeamRunScores:
    """Read a BEAM run directory's per-question scores and what produced its verdicts.

    Args:
        path: the run directory (``summary.json``, ``scores.jsonl``).

    Returns:
        :class:`BeamRunScores`.

    Raises:
        ValueError: a run with no scores (a dry run, unjudged answers), or a missing or
            malformed ``scores.jsonl`` (one line naming the file and the line).
    """
    summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    check_version(summary, str(path / "summary.json"))  # a newer layout: one line
    if not summary.get("figures"):
        raise ValueError(f"{path / 'summary.json'}: this BEAM run scored nothing "
                         f"({summary.get('status', {}).get('scoring', 'no figures')}); "
                         "compare runs that have figures")
    judged = summary.get("judge") or {}
    file = path / "scores.jsonl"
    if not file.is_file():
        raise ValueError(f"{file}: missing; compare needs the run's scores.jsonl")
    scores: dict[str, tuple[str, str, dict[str, float | None]]] = {}
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
            scores[str(row["question_id"])] = (
                str(row["ability"]), str(row["chat"]),
                {profile: _profile_score(row, profile) for profile in PROFILES})
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"{file}: line {number}: not a BEAM score row ({error})") from None
    baselines = {f"{b['name']} ({b['profile']}, judge {b['judge']})":
                 (b.get("not_comparable") or {}).get(b["profile"])
                 for b in summary.get("baselines", [])}
    return BeamRunScores(
        path=path,
        verdict_prompt=str(judged.get("profile") or p.NUGGET),
        strict=bool(judged.get("strict")),
        judge=summary.get("verdicts", {}).get("judge_model"),
        baselines=baselines,
        scores=scores,
    )


def not_comparable(a: BeamRunScores, b: BeamRunScores) -> list[str]:
    """Why the two runs' item verdicts do not compare (empty when they do)."""
    reasons = []
    if a.verdict_prompt != b.verdict_prompt:
        reasons.append(f"item verdicts judged under different profiles' prompts "
                       f"({a.verdict_prompt} vs {b.verdict_prompt})")
    if a.strict != b.strict:
        reasons.append(f"beam.strict differs ({a.strict} vs {b.strict})")
    if a.judge != b.judge:
        reasons.append(f"different judges ({a.judge or 'not named'} vs "
                       f"{b.judge or 'not named'})")
    return reasons


def compare_group(pairs: list[tuple[float, float, str]], unpaired: int, *, samples: int,
                  permutations: int, seed: int) -> dict[str, Any]:
    """The paired comparison of one group of questions.

    Args:
        pairs: ``(score A, score B, chat)`` of each paired question (0-1).
        unpaired: questions of the group scored in one run only, or in neither.
        samples: bootstrap resamples.
        permutations: the sign-flip test's Monte Carlo budget.
        seed: the seed of both.

    Returns:
        ``{n_pairs, unpaired, chats, mean_a, mean_b, difference, ci, test, pvalue}``
        (0-1 figures); ``None`` figures when nothing pairs.
    """
    out: dict[str, Any] = {"n_pairs": len(pairs), "unpaired": unpaired, "chats": None,
                           "mean_a": None, "mean_b": None, "difference": None, "ci": None,
                           "test": None, "pvalue": None}
    if not pairs:
        return out
    xa = [x for x, _, _ in pairs]
    xb = [y for _, y, _ in pairs]
    chats = [c for _, _, c in pairs]
    interval = cluster_bootstrap_mean_diff(xa, xb, chats, n_resamples=samples, seed=seed)
    test = sign_flip_test(xa, xb, n_resamples=permutations, seed=seed)
    out.update(chats=interval.n_units, mean_a=sum(xa) / len(xa), mean_b=sum(xb) / len(xb),
               difference=interval.estimate, ci=[interval.low, interval.high],
               test=test.test, pvalue=test.pvalue)
    return out


def _pairs(a: BeamRunScores, b: BeamRunScores, profile: str, ability: str | None
           ) -> tuple[list[tuple[float, float, str]], int]:
    ids = {q for q, (ab, _, _) in a.scores.items() if ability is None or ab == ability}
    ids |= {q for q, (ab, _, _) in b.scores.items() if ability is None or ab == ability}
    pairs = []
    for q in sorted(ids):
        if q in a.scores and q in b.scores:
            sa, sb = a.scores[q][2][profile], b.scores[q][2][profile]
            if sa is not None and sb is not None:
                pairs.append((sa, sb, a.scores[q][1]))
    return pairs, len(ids) - len(pairs)


def compare_runs(a: BeamRunScores, b: BeamRunScores, *, samples: int, permutations: int,
                 seed: int) -> dict[str, Any]:
    """Both profiles' comparisons (``compare.json``'s content).

    Args:
        a: run A.
        b: run B.
        samples: bootstrap resamples (``compare.bootstrap_samples``).
        permutations: sign-flip Monte Carlo budget (``compare.permutation_samples``).
        seed: the seed of every resampling (``compare.seed``).

    Returns:
        ``{benchmark, runs, verdicts, difference, not_comparable, baselines, profiles:
        {profile: {ability or "overall": group}}}``; each ability group also carries
        ``pvalue_holm`` (Holm over the profile's abilities with pairs).
    """
    tables: dict[str, dict[str, Any]] = {}
    for profile in PROFILES:
        groups: dict[str, Any] = {}
        for ability in ABILITIES:
            pairs, unpaired = _pairs(a, b, profile, ability)
            if pairs or unpaired:
                groups[ability] = compare_group(pairs, unpaired, samples=samples,
                                                permutations=permutations, seed=seed)
        adjusted = holm_adjust([g["pvalue"] for g in groups.values()])
        for group, holm in zip(groups.values(), adjusted, strict=True):
            group["pvalue_holm"] = holm
        pairs, unpaired = _pairs(a, b, profile, None)
        groups[OVERALL] = compare_group(pairs, unpaired, samples=samples,
                                        permutations=permutations, seed=seed)
        tables[profile] = groups
    names = sorted(set(a.baselines) | set(b.baselines))
    return {
        "benchmark": NAME,
        "runs": [str(a.path), str(b.path)],
        "verdicts": [{"prompt_profile": r.verdict_prompt, "strict": r.strict, "judge": r.judge}
                     for r in (a, b)],
        "difference": "A - B, mean question score (0-1)",
        "holm_family": "the abilities of one profile (the overall row is a separate test)",
        "not_comparable": not_comparable(a, b),
        "baselines": {name: [r.baselines.get(name, "not in the run's summary") for r in (a, b)]
                      for name in names},
        "profiles": tables,
    }


def _fig(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def table_rows(groups: dict[str, Any], profile: str = p.NUGGET) -> list[list[str]]:
    """One profile's rows: ability, pairs, chats, A, B, A - B, 95% CI, p, Holm p.

    beam-official's overall row is labelled as not the authors' figure (they report none).
    """
    rows = []
    for key, g in groups.items():
        label = ability_title(key)
        if key == OVERALL:
            label = OVERALL if profile == p.NUGGET else "all questions (not the authors')"
        if not g["n_pairs"]:
            rows.append([label, f"0 (+{g['unpaired']} unpaired)", "", "", "", "not measured",
                         "", "", ""])
            continue
        unpaired = f" (+{g['unpaired']} unpaired)" if g["unpaired"] else ""
        rows.append([
            label, f"{g['n_pairs']}{unpaired}", str(g["chats"]), _fig(g["mean_a"]),
            _fig(g["mean_b"]), f"{g['difference']:+.3f}",
            f"[{g['ci'][0]:+.3f}, {g['ci'][1]:+.3f}]", _p(g["pvalue"]),
            _p(g.get("pvalue_holm")) if key != OVERALL else "(not in family)",
        ])
    return rows


HEADER = ["ability", "pairs", "chats", "A", "B", "A - B", "95% CI (chats)", "p", "Holm p"]


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [HEADER, *rows]]


def _warnings(result: dict[str, Any], labels: tuple[str, str]) -> list[str]:
    lines = []
    if result["not_comparable"]:
        lines.append("WARNING: NOT COMPARABLE: " + "; ".join(result["not_comparable"])
                     + ". The differences below mix the systems with their judging.")
    for name, per_run in result["baselines"].items():
        for label, why in zip(labels, per_run, strict=True):
            lines.append(f"run {label} vs published {name}: "
                         + (f"NOT COMPARABLE ({why})" if why else "comparable"))
    return lines


def render(result: dict[str, Any], labels: tuple[str, str]) -> tuple[list[str], str]:
    """The console lines and the markdown of ``compare.md``.

    Args:
        result: :func:`compare_runs`'s output.
        labels: the two runs' display names.
    """
    v = result["verdicts"]
    head = (f"{TITLE} comparison: A = {labels[0]} (verdicts {v[0]['prompt_profile']}, judge "
            f"{v[0]['judge'] or 'not named'}), B = {labels[1]} (verdicts "
            f"{v[1]['prompt_profile']}, judge {v[1]['judge'] or 'not named'})")
    warnings = _warnings(result, labels)
    console = [head, *warnings]
    md = [f"# {head}", "", *[f"- {w}" for w in warnings], ""]
    for profile, groups in result["profiles"].items():
        title = (f"Profile {profile}: mean question score, A - B; 95% percentile cluster "
                 "bootstrap over chats; paired sign-flip test, Holm over the abilities")
        rows = table_rows(groups, profile)
        console += ["", title, *_aligned(rows)]
        md += [f"## {title}", "", "| " + " | ".join(HEADER) + " |",
               "|" + "---|" * len(HEADER), *["| " + " | ".join(r) + " |" for r in rows], ""]
    return console, "\n".join(md)


def run_beam_compare(cfg: ExperimentConfig, output_dir: Path, start_dir: Path
                     ) -> tuple[list[str], dict[str, Any]]:
    """Compare the two BEAM runs of ``compare.runs``; write ``compare.json``/``.md``.

    Args:
        cfg: the typed config (``compare.*``).
        output_dir: where the outputs go.
        start_dir: the directory relative run paths are resolved against.

    Returns:
        The console lines, and the comparison as written to ``compare.json``.

    Raises:
        ValueError: not exactly two runs, or a run with no scores or malformed scores.
        OSError: an unwritable output directory.
    """
    dirs = compare_run_dirs(cfg, start_dir)
    if len(dirs) != 2:
        raise ValueError(f"compare.runs: a BEAM comparison takes exactly two runs, "
                         f"got {len(dirs)}")
    check_writable(output_dir)
    a, b = (read_run(path) for path in dirs)
    result = compare_runs(a, b, samples=cfg.compare.bootstrap_samples,
                          permutations=cfg.compare.permutation_samples, seed=cfg.compare.seed)
    given = cfg.compare.labels or [str(r) for r in cfg.compare.runs]
    labels = (given[0], given[1])
    console, md = render(result, labels)
    prepare_output_dir(output_dir, cfg.overwrite)
    atomic_write_text(output_dir / "compare.json", json.dumps(result, indent=2) + "\n")
    atomic_write_text(output_dir / "compare.md", md + "\n")
    return [*console, "", f"Comparison: {output_dir / 'compare.md'}"], result


__all__ = ["BeamRunScores", "claims_runs", "compare_group", "compare_runs",
           "not_comparable", "read_run", "render", "run_beam_compare"]
