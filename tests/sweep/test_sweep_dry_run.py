"""A dry-run sweep's summary shows the dry run's estimates, marked, never "$0.0000" (trial finding)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from locomo_exp import sweep

# summary.json["judge"] of a dry-run job as the judge job writes it (a template dry run on
# the example: 16 answer calls, 53 audit calls), with no call made
DRY_JUDGE: dict[str, Any] = {
    "j": {},
    "counts": {"parse_failure": 0, "api_error": 0},
    "tokens": {"input": 0, "output": 0},
    "estimated_cost_usd": 0.0,
    "dry_run_estimate": {
        "calls_total": 16, "calls_cached": 0, "calls_to_make": 16,
        "estimated_input_tokens": 1234, "estimated_output_tokens": 160,
        "estimated_cost_usd": 0.006102, "audit_calls_to_make": 53,
        "audit_estimated_cost_usd": 0.0201, "total_calls_to_make": 69,
        "total_estimated_cost_usd": 0.026202,
        "total_estimated_input_tokens": 5234, "total_estimated_output_tokens": 690,
    },
}


def _row(job: int, template: str, judge: dict[str, Any]) -> dict[str, Any]:
    record = sweep.JobRecord(
        job=job,
        overrides=[f"judge.template={template}"],
        swept={"judge.template": template},
        run_name=f"judge.template={template}",
        status=sweep.COMPLETED,
        output_dir="/x",
        error=None,
        f1_variant=None,
    )
    return sweep.summary_row(record, {"counts": {"overall": 20}, "metrics": {}, "judge": judge})


def _table(rows: list[dict[str, Any]]) -> tuple[str, list[str]]:
    context = sweep.SweepContext(
        name="sweep judge.template=a,b", sweep_dir="/s", swept_keys=["judge.template"],
        swept_overrides=["judge.template=a,b"],
    )
    markdown = sweep.render_sweep_summary(sweep.build_sweep_summary(context, rows))
    return markdown, [line for line in markdown.splitlines() if line.startswith("| ")]


def test_a_dry_run_job_shows_its_estimates_marked_and_its_status_says_dry_run() -> None:
    markdown, table = _table([_row(0, "strict.yaml", DRY_JUDGE)])
    cells = [c.strip() for c in table[1].strip("|").split("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    by_name = dict(zip(header, cells, strict=True))
    assert by_name["status"] == "COMPLETED (dry run)"
    # tokens and cost of the same calls (trial 4, finding 13): answers + audit in both
    assert by_name["input tokens"] == "~5234" and by_name["output tokens"] == "~690"
    assert by_name["cost $"] == "~0.0262"  # 0.006102 answers + 0.0201 audit
    assert by_name["J"] == "—"  # no std anywhere: no "± std" in the header (finding 16)
    assert "- dry run (judge.dry_run=true): no judge call was made and no J exists" in markdown


def test_a_judged_job_keeps_its_paid_tokens_and_cost() -> None:
    paid = {**DRY_JUDGE, "tokens": {"input": 900, "output": 90}, "estimated_cost_usd": 0.0042}
    del paid["dry_run_estimate"]
    markdown, table = _table([_row(0, "strict.yaml", paid)])
    assert "| COMPLETED | " in table[1] and "(dry run)" not in markdown
    assert "| 900 | 90 | 0.0042 |" in table[1]


def _f1_row(job: int, variant: str | None, status: str = sweep.COMPLETED) -> dict[str, Any]:
    record = sweep.JobRecord(
        job=job, overrides=[f"f1={variant}"], swept={"f1": variant}, run_name=f"f1={variant}",
        status=status, output_dir="/x", error=None if status == sweep.COMPLETED else "bad input",
        f1_variant=variant,
    )
    return sweep.summary_row(record, None if status != sweep.COMPLETED else {
        "counts": {"overall": 20}, "metrics": {"f1": {"overall": {"mean": 0.5, "count": 20}}}})


@pytest.mark.parametrize(
    ("variants", "line"),
    [
        ([None, None], "- F1 not measured (no job scored F1); J on 0-100"),
        (["locomo"], "- F1 in percent (locomo variant); J on 0-100"),
        (["squad", "locomo"], "- F1 in percent (locomo, squad variants); J on 0-100"),
    ],
)
def test_the_f1_heading_names_the_variants_or_says_none_was_measured(
    variants: list[str | None], line: str
) -> None:
    rows = [_f1_row(i, v, sweep.COMPLETED if v else sweep.FAILED) for i, v in enumerate(variants)]
    markdown, _ = _table(rows)
    assert any(text.startswith(line) for text in markdown.splitlines())
    assert "n/a variant" not in markdown


# -- trial 4, finding 6: a dry run and a judge-only sweep report nothing unmeasured ----------


def test_a_dry_run_job_has_no_parse_failure_or_api_error_count() -> None:
    """A dry run made no call: 0 parse failures would be a measurement; it reads "—"."""
    row = _row(0, "strict.yaml", DRY_JUDGE)
    assert (row["parse_failures"], row["api_errors"]) == (None, None)
    markdown, table = _table([row])
    header = [c.strip() for c in table[0].strip("|").split("|")]
    by_name = dict(zip(header, [c.strip() for c in table[1].strip("|").split("|")], strict=True))
    assert (by_name["parse failures"], by_name["API errors"]) == ("—", "—")
    assert "parse failures, API errors and J comparisons are not measured (—)" in markdown


def test_a_judge_only_sweep_makes_no_f1_comparison_verdict_or_plot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from test_compare import _questions, write_run

    from locomo_exp.sweep.plot import _series
    from locomo_exp.sweep.vs_baseline import compare_with_baseline, f1_unchanged_by

    assert f1_unchanged_by(["judge.temperature"]) == "F1 does not depend on judge.temperature"
    assert f1_unchanged_by(["judge.temperature", "data.path"]) is None
    assert f1_unchanged_by([]) is None
    qs = _questions()
    rows = []
    for job, temperature in enumerate(("0.0", "0.5")):
        run = write_run(tmp_path / f"r{job}", qs, [0.5] * 60)
        record = sweep.JobRecord(
            job, [f"judge.temperature={temperature}"], {"judge.temperature": temperature}, "x",
            sweep.COMPLETED, str(run), f1_variant="locomo",
        )
        summary = json.loads((run / "summary.json").read_text())
        summary["metrics"] = {"f1": {"overall": {"mean": 0.5, "count": 60}}}
        summary["judge"] = DRY_JUDGE
        rows.append(sweep.summary_row(record, summary))
    base = compare_with_baseline(rows, None, tmp_path, bootstrap_samples=50,
                                 permutation_samples=50)
    assert "f1" not in (rows[1].get("vs_baseline") or {})  # never "+0.00 not distinguishable"
    context = sweep.SweepContext(
        name="s", sweep_dir=str(tmp_path), swept_keys=["judge.temperature"],
        swept_overrides=["judge.temperature=0.0,0.5"],
    )
    summary = sweep.build_sweep_summary(context, rows)
    summary["baseline"] = base
    markdown = sweep.render_sweep_summary(summary)
    assert "- F1 does not depend on judge.temperature: every job has the same F1" in markdown
    assert "- F1 not compared: F1 does not depend on judge.temperature" in markdown
    assert (
        "- job 1: — vs baseline: J not measured (dry run: no judge call was made)" in markdown
    )
    assert "not distinguishable" not in markdown
    done = [(float(r["swept"]["judge.temperature"]), r) for r in rows]
    assert [label for label, _ in _series(done, 0, same_f1=True)] == []
    assert sweep.plot_sweep(summary, tmp_path / "plot.png") is None  # nothing was measured
    assert not (tmp_path / "plot.png").exists()


def test_a_job_without_j_beside_one_with_j_names_the_job_that_lacks_it() -> None:
    from locomo_exp.sweep.summary import _has_j, _missing

    with_j = {"job": 0, "j_overall": 70.0, "stored_j_overall": None}
    without = {"job": 1, "j_overall": None, "stored_j_overall": None}
    assert _missing("J", without, with_j, _has_j) == "no J in job 1"
    assert _missing("J", without, dict(without, job=0), _has_j) == "no J in either job"


def test_an_estimate_written_before_the_totals_pairs_the_answers_tokens_with_their_cost() -> None:
    old = {**DRY_JUDGE, "dry_run_estimate": {
        k: v for k, v in DRY_JUDGE["dry_run_estimate"].items() if not k.startswith("total_est")
    }}
    _, table = _table([_row(0, "strict.yaml", old)])
    assert "| ~1234 | ~160 | ~0.0061 |" in table[1]


def test_a_dry_runs_total_tokens_are_priced_at_its_total_cost(
    typed_config, tmp_path  # type: ignore[no-untyped-def]
) -> None:
    """The dry run's totals cover the same calls: the cost of the total tokens is the total cost."""
    from locomo_exp.experiment import run_experiment
    from locomo_exp.llm.models import model_price
    from locomo_exp.llm.spend import cost_usd

    cfg = typed_config("scorer=both", "data=example", "tracking.enabled=false", "judge.runs=3",
                       "judge.dry_run=true", f"judge.cache_path={tmp_path}/c.sqlite")
    estimate = run_experiment(cfg, tmp_path / "out", tmp_path).summary["judge"]["dry_run_estimate"]
    assert estimate["audit_calls_to_make"] > 0
    assert estimate["total_estimated_input_tokens"] > estimate["estimated_input_tokens"]
    priced = cost_usd(model_price(cfg.judge), estimate["total_estimated_input_tokens"],
                      estimate["total_estimated_output_tokens"])
    assert priced == pytest.approx(estimate["total_estimated_cost_usd"], abs=1e-6)


def test_the_j_column_says_std_only_when_a_job_has_one() -> None:
    judged = {**DRY_JUDGE, "j": {"overall": {"mean": 70.0, "count": 20,
                                            "std_across_runs": 1.5}}}
    del judged["dry_run_estimate"]
    markdown, table = _table([_row(0, "a.yaml", judged), _row(1, "b.yaml", DRY_JUDGE)])
    assert "| J ± std |" in table[0] and "| 70.00 ± 1.50 |" in table[1]
    assert "mean ± standard deviation of the overall J across runs" in markdown
