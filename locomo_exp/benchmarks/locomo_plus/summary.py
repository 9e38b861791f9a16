"""What a LoCoMo-Plus run writes: ``summary.json``, ``card.json``, ``scores.jsonl`` rows.

Pure builders (numbers and words; markdown is :mod:`.report`). Two readings of the same
stored verdicts are kept: ``ours`` (a failed call is not a verdict) and, for the authors'
layout, ``authors`` (every stored label at face value, as their summary counts it). The
``headline`` is the reading ``judge.parser`` asks for.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import CATEGORIES, NAME, TITLE
from locomo_exp.benchmarks.locomo_plus.figures import compute_figures, read_stored
from locomo_exp.benchmarks.locomo_plus.judged import JudgedReadings
from locomo_exp.benchmarks.locomo_plus.parsing import AUTHORS, OURS
from locomo_exp.benchmarks.locomo_plus.run_log import plus_run_log
from locomo_exp.benchmarks.locomo_plus.runs import AUTHORS as AUTHORS_LAYOUT
from locomo_exp.benchmarks.locomo_plus.runs import LAYOUT_TITLES, StoredRun
from locomo_exp.report.provenance import provenance
from locomo_exp.results import SCHEMA_VERSION

METRIC_VERSION = "locomo_plus-1"
"""Version of the figures' semantics (label map, means, factual and gap definitions)."""


def parser_section(run: StoredRun, parser: str) -> dict[str, Any]:
    """What ``judge.parser`` did to a stored run, in numbers.

    Args:
        run: the stored run.
        parser: ``ours`` or ``authors``.

    Returns:
        ``{name, api_errors, derived_from_api_errors, derived_from_no_label, note}``:
        with ``authors``, the verdicts it took from API errors (every stored label whose
        reason is an error text) and from replies with no label (``None``: a stored file
        does not record which replies held one).
    """
    errors = sum(row.api_error for row in run.rows)
    if parser == AUTHORS:
        return {"name": AUTHORS, "api_errors": errors, "derived_from_api_errors": errors,
                "derived_from_no_label": None,
                "note": "stored labels taken at face value, as the authors' summary counts "
                        "them; which stored replies held no label is not recorded"}
    return {"name": OURS, "api_errors": errors, "derived_from_api_errors": 0,
            "derived_from_no_label": 0,
            "note": "a stored API error is a failed call, not a verdict"}


def judged_parser_section(readings: JudgedReadings, parser: str) -> dict[str, Any]:
    """What ``judge.parser`` did to a judged run's replies, in numbers.

    Args:
        readings: both parsers' readings of the replies.
        parser: ``ours`` or ``authors``.

    Returns:
        ``{name, api_errors, derived_from_api_errors, derived_from_no_label, note}``; the
        derived counts are judge runs (calls), 0 for ours, which derives no verdict.
    """
    errors = readings.derived_from_api_errors  # every failed call is one the authors read
    if parser == AUTHORS:
        return {"name": AUTHORS, "api_errors": errors, "derived_from_api_errors": errors,
                "derived_from_no_label": readings.derived_from_no_label,
                "note": "the authors' three steps on each raw reply; a failed call read as "
                        "their wrapper's '[API Error: ...]' text"}
    return {"name": OURS, "api_errors": errors, "derived_from_api_errors": 0,
            "derived_from_no_label": 0,
            "note": "a failed call is not a verdict; a reply with no label is unscored"}


def build_judged_summary(run: StoredRun, *, parser: str, samples: int, seed: int,
                         judge: dict[str, Any], readings: JudgedReadings | None,
                         f1: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``summary.json`` content of a judged LoCoMo-Plus run (or its dry run).

    Args:
        run: the answers file, read.
        parser: ``judge.parser``: the headline reading.
        samples: bootstrap resamples of the intervals.
        seed: their seed.
        judge: the judge section (settings, counts, cost; with ``dry_run`` the estimate).
        readings: both parsers' readings, ``None`` for a dry run (no call made).
        f1: the factual items' F1 (``scorer=both``, :func:`.f1.f1_section`), or ``None``.

    Returns:
        The layout of :func:`build_summary`, with ``verdicts.source`` ``judged`` (or
        ``dry run``) and a ``judge`` section; both readings are always present; an ``f1``
        section only when ``f1`` is given; the ``run_log`` built last.
    """
    summary = _stored_summary(run, parser=parser, samples=0, seed=seed)
    if readings is None:
        for name in (OURS, AUTHORS):
            figures = compute_figures([], samples=0, seed=seed)
            figures["status"] = "dry run: no judge call made; accuracy not measured"
            summary["readings"][name] = figures
        summary["parser"] = {"name": parser, "api_errors": 0, "derived_from_api_errors": 0,
                             "derived_from_no_label": 0, "note": "dry run: no reply read"}
        source = "dry run"
    else:
        summary["readings"] = {
            OURS: compute_figures(readings.ours, samples=samples, seed=seed),
            AUTHORS: compute_figures(readings.authors, samples=samples, seed=seed),
        }
        summary["parser"] = judged_parser_section(readings, parser)
        source = "judged"
    words = (f"{judge.get('model')} ({judge.get('provider')}), protocol "
             f"{judge.get('protocol')} {judge.get('prompt_version')}, temperature "
             f"{judge.get('temperature')}, max_tokens {judge.get('max_tokens')}, "
             f"{judge.get('runs')} run(s) per item")
    summary["verdicts"] = {"source": source, "judge": words, "label": f"J judged now: {words}"}
    summary["judge"] = judge
    if f1 is not None:
        summary["f1"] = f1
    summary["authors_aggregate"] = None
    failed = summary["parser"]["api_errors"]
    summary["warnings"] = ([f"{failed:,} of {readings.calls:,} judge calls failed (API errors)"]
                           if readings is not None and failed else [])
    summary["warnings"] += [str(w) for w in (judge.get("trust") or {}).get("warnings") or ()]
    summary["run_log"] = plus_run_log(summary).to_json()  # the typed log (docs/run_log.md)
    return summary


def build_summary(run: StoredRun, *, parser: str, samples: int, seed: int) -> dict[str, Any]:
    """The ``summary.json`` content of a stored LoCoMo-Plus run, with its typed ``run_log``.

    Args:
        run: the stored run.
        parser: ``judge.parser`` (``ours`` or ``authors``): the headline reading.
        samples: bootstrap resamples of the intervals.
        seed: their seed.

    Returns:
        The sections of the run (below) and ``run_log`` (:func:`.run_log.plus_run_log`).
    """
    summary = _stored_summary(run, parser=parser, samples=samples, seed=seed)
    summary["run_log"] = plus_run_log(summary).to_json()  # the typed log (docs/run_log.md)
    return summary


def _stored_summary(run: StoredRun, *, parser: str, samples: int, seed: int) -> dict[str, Any]:
    """The sections of a stored LoCoMo-Plus run's ``summary.json`` (no ``run_log`` yet).

    Args:
        run: the stored run.
        parser: ``judge.parser`` (``ours`` or ``authors``): the headline reading.
        samples: bootstrap resamples of the intervals.
        seed: their seed.

    Returns:
        ``{schema_version, benchmark, title, scales, versions, input, verdicts, parser,
        readings: {ours, authors?}, headline, authors_aggregate, warnings}``; figures are
        0-1 (:mod:`.figures`).
    """
    readings = {OURS: compute_figures(read_stored(run.rows, OURS), samples=samples, seed=seed)}
    if run.layout == AUTHORS_LAYOUT or parser == AUTHORS:
        readings[AUTHORS] = compute_figures(read_stored(run.rows, AUTHORS), samples=samples,
                                            seed=seed)
    errors = sum(row.api_error for row in run.rows)
    if AUTHORS in readings and errors:
        readings[AUTHORS]["caveat"] = (
            f"rests on {errors:,} API errors of {len(run.rows):,} stored verdicts, each "
            "scored 'correct' by the authors' parser: not a measurement of accuracy")
    aggregate = None
    if run.layout == AUTHORS_LAYOUT:
        theirs = run.authors_summary
        aggregate = {
            "overall_avg": theirs["overall_avg"] if theirs else readings[AUTHORS]["overall"],
            "source": (f"the authors' {theirs['path']}" if theirs
                       else "recomputed from the stored labels with the authors' rule"),
            "recomputed_from_labels": readings[AUTHORS]["overall"],
            "n": len(run.rows),
            "resting_on_api_errors": errors,
        }
    warnings = []
    if errors:
        warnings.append(f"{errors:,} of {len(run.rows):,} stored verdicts are API errors"
                        + ("; accuracy not measured" if not readings[OURS]["n_scored"] else ""))
    counts = Counter(row.category for row in run.rows)
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": NAME,
        "title": TITLE,
        "scales": {"figures": "0-1 (mean label score: correct 1, partial 0.5, wrong 0)"},
        "versions": {"metrics": METRIC_VERSION},
        "input": {
            "path": str(run.path), "sha256": run.sha256, "layout": run.layout,
            "layout_title": LAYOUT_TITLES[run.layout], "rows": len(run.rows),
            "per_category": {c: counts[c] for c in CATEGORIES if counts[c]},
            "answer_models": run.answer_models,
            "conversations_known": all(r.conversation is not None for r in run.rows),
        },
        "verdicts": {"source": "stored", "judge": run.judge,
                     "label": f"stored J ({run.judge})"},
        "parser": parser_section(run, parser),
        "readings": readings,
        "headline": parser,
        "authors_aggregate": aggregate,
        "warnings": warnings,
    }


def build_card(summary: dict[str, Any], *, argv: list[str] | None = None) -> dict[str, Any]:
    """The ``card.json`` of a LoCoMo-Plus run: provenance, input, verdicts, the headline.

    Args:
        summary: the run's ``summary.json``.
        argv: the command line (default ``sys.argv``).

    Returns:
        The provenance fields (:func:`locomo_exp.report.provenance.provenance`), then
        ``benchmark``, ``input`` (path, sha256, layout), ``verdicts``, ``parser``,
        ``metric_version``, ``headline`` (overall, Cognitive, both factual averages, status);
        with ``scorer=both`` also ``f1`` (variant, version, both factual F1 averages, 0-1).
    """
    head = summary["readings"][summary["headline"]]
    f1 = summary.get("f1")
    return {
        **provenance(argv=argv),
        "benchmark": summary["benchmark"],
        "input": {k: summary["input"][k] for k in ("path", "sha256", "layout")},
        "verdicts": summary["verdicts"]["label"],
        "parser": summary["parser"]["name"],
        "metric_version": summary["versions"]["metrics"],
        "headline": {"status": head["status"], "caveat": head.get("caveat"),
                     "overall": head["overall"],
                     "cognitive": head["cognitive"], "factual": {
                         k: head["factual"][k] for k in ("unweighted", "item_weighted")}},
        **({"f1": {"variant": f1["variant"], "version": f1["version"], "factual": {
            k: f1["factual"][k] for k in ("unweighted", "item_weighted")}}} if f1 else {}),
    }


def score_rows(run: StoredRun) -> list[dict[str, Any]]:
    """One ``scores.jsonl`` row per item: the stored verdict and both readings' scores.

    Args:
        run: the stored run.

    Returns:
        Rows ``{item_id, category, relation, conversation, question, prediction,
        stored_label, api_error, score, unscored, score_authors}``.
    """
    ours = read_stored(run.rows, OURS)
    theirs = read_stored(run.rows, AUTHORS)
    return [
        {"item_id": row.item_id, "category": row.category, "relation": row.relation,
         "conversation": row.conversation, "question": row.question,
         "prediction": row.prediction, "stored_label": row.label, "api_error": row.api_error,
         "score": o.score, "unscored": o.unscored or None, "score_authors": a.score}
        for row, o, a in zip(run.rows, ours, theirs, strict=True)
    ]
