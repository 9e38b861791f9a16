"""What MLflow's pages show first (issue 20 §3): params, headline metrics, notes, report.html."""

from __future__ import annotations

import base64
from pathlib import Path

from conftest import Composer

from locomo_exp.experiment import run_experiment
from locomo_exp.report.html import render_report_html
from locomo_exp.sweep.plot import plot_sweep
from locomo_exp.sweep.summary import summary_row
from locomo_exp.tracking import (
    card_params,
    config_measurement_params,
    headline_metrics,
    run_description,
    sweep_description,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_report_html_inlines_the_plots_and_renders_tables() -> None:
    text = "# Report\n\n| group | F1 |\n|---|---:|\n| overall | 61.20 |\n\n![plot](plot.png)\n\n![gone](gone.png)\n<b>raw</b>\n"
    page = render_report_html(text, {"plot.png": PNG}, "answers <1>.json")
    assert page.startswith("<!doctype html>")
    assert "<title>answers &lt;1&gt;.json</title>" in page
    assert "<td>overall</td>" in page and "<td style=\"text-align:right\">61.20</td>" in page
    assert f'<img src="data:image/png;base64,{base64.b64encode(PNG).decode()}" alt="plot"' in page
    assert '<img src="gone.png" alt="gone"' in page  # not given: the link stays
    assert "<b>raw</b>" not in page and "&lt;b&gt;raw&lt;/b&gt;" in page  # raw HTML escaped


def test_example_run_writes_report_html_beside_report_md(tmp_path: Path, typed_config: Composer) -> None:
    result = run_experiment(typed_config("tracking=none"), tmp_path / "out", tmp_path)
    page = (result.output_dir / "report.html").read_text()
    png = (result.output_dir / "category_scores.png").read_bytes()
    assert base64.b64encode(png).decode() in page
    assert "How this was measured" in page
    assert "report.html" in [p.name for p in result.files]


def test_headline_keeps_the_sweeps_question_and_leaves_the_rest() -> None:
    groups = ["overall", "overall_1_4", "cat1_multi_hop", "cat2_temporal", "cat3_open_domain",
              "cat4_single_hop", "cat5_adversarial"]
    every: dict[str, float] = {}
    for metric in ("f1", "j", "f1_squad", "f1_mem0", "bleu1", "f1_locomo_official"):
        for group in groups:
            every[f"{metric}/{group}"] = 50.0
            every[f"{metric}/{group}_ci_low"] = 40.0
            every[f"{metric}/{group}_ci_high"] = 60.0
            every[f"{metric}/{group}_std_across_runs"] = 1.0
    for kind in ("gold_as_answer", "other_gold", "non_answer", "perturbed_date"):
        every[f"audit/{kind}/accept_rate"] = 10.0
        every[f"audit/{kind}/accept_rate_ci_low"] = 5.0
    every |= {"audit/false_accept_rate": 8.0, "audit/false_accept_rate_ci_high": 12.0,
              "audit/gate_passed": 100.0, "panel/kappa/a__b": 0.5, "judge/api_errors": 0.0,
              "judge/input_tokens": 1e6, "n_questions/overall": 1540.0, "n_questions/cat1_multi_hop": 282.0,
              "j/overall_std_across_runs": 0.4}
    kept = headline_metrics(every)
    assert len(every) > 180 and len(kept) <= 60, len(kept)
    assert {f"{m}/{g}" for m in ("f1", "j") for g in groups} <= set(kept)
    # intervals of the overall groups; per category in intervals_table.json (issue 20 §3's budget)
    assert {f"{m}/{g}{s}" for m in ("f1", "j") for g in groups[:2] for s in ("_ci_low", "_ci_high")} <= set(kept)
    assert not [n for n in kept if "/cat" in n and n.endswith(("_ci_low", "_ci_high"))]
    assert {"audit/false_accept_rate", "audit/false_accept_rate_ci_high", "audit/gate_passed",
            "judge/api_errors", "n_questions/overall", "j/overall_std_across_runs"} <= set(kept)
    assert not [n for n in kept if n.startswith(("audit/non_answer", "panel/kappa"))]
    # every F1 variant's and BLEU-1's overall, nothing more of them (trial 4, finding 15)
    others = ("bleu1/", "f1_squad/", "f1_mem0/", "f1_locomo_official/")
    assert sorted(n for n in kept if n.startswith(others)) == [
        "bleu1/overall", "f1_locomo_official/overall", "f1_mem0/overall", "f1_squad/overall"]
    assert "j/cat1_multi_hop_std_across_runs" not in kept and "judge/input_tokens" not in kept


def test_config_params_are_the_measurements_settings_plus_swept_keys() -> None:
    tree = {"scorer": {"name": "both"}, "f1": {"variant": "locomo", "bleu1": True},
            "data": {"path": "a.json", "limit": None, "on_invalid": "error"},
            "judge": {"model": "m", "temperature": 0.5, "max_concurrency": 32, "api_key": "sk-x",
                      "audit": {"n": 50, "seed": 0}, "batch": {"wait": True}},
            "tracking": {"uri": None}}
    params = config_measurement_params(tree, judge_ran=True, swept_keys=["judge.max_concurrency"])
    assert params == {"scorer.name": "both", "f1.variant": "locomo", "f1.bleu1": "true", "data.path": "a.json",
                      "judge.model": "m", "judge.temperature": "0.5", "judge.audit.n": "50",
                      "judge.max_concurrency": "32"}  # data.limit is unset (null): not logged
    swept = config_measurement_params(tree, judge_ran=True, swept_keys=["data.limit"])
    assert swept["data.limit"] == "null"
    assert not [k for k in config_measurement_params(tree, judge_ran=False) if k.startswith("judge.")]


def test_card_params_and_run_description_say_the_result() -> None:
    card = {"input": {"name": "a.json", "sha256": "ab" * 32, "format": "mem0"}, "question_set": "1,540",
            "f1": {"variant": "mem0", "version": "v1"}, "judge": {"model": "claude-x", "protocol": "binary",
            "temperature": 0.0, "runs": 3, "prompt_version": "p2", "model_snapshot": None},
            "answer_key": {"version": "original"}, "stored_judge": False, "tool": {"version": "0.1.0"}}
    params = card_params(card)
    assert params["data.file"] == "a.json" and params["question_set"] == "1,540"
    assert params["judge.prompt_version"] == "p2" and "judge.model_snapshot" not in params
    metrics = {"j/overall": 75.125, "j/overall_ci_low": 72.0, "j/overall_ci_high": 78.25,
               "f1/overall": 51.45, "n_questions/overall": 1540.0}
    note = run_description(metrics, card, {"f1": "ok", "judge": "ok"})
    assert note.splitlines()[0] == ("**J 75.12** [72.00, 78.25] · **F1 (mem0) 51.45** "
                                    "(0-100; 95% bootstrap intervals over questions)")
    assert "Questions: 1,540 (1540 scored) from `a.json` (format mem0)" in note
    assert "Judge: claude-x (binary, temperature 0.0, 3 run(s), prompt p2)" in note
    assert "Status: f1 ok, judge ok" in note


def _sweep_rows() -> dict:
    def row(job: int, t: str, j: float, verdict: str | None) -> dict:
        return {"job": job, "status": "COMPLETED", "swept": {"judge.temperature": t}, "j_overall": j,
                "j_std_across_runs": None, "j_ci": [j - 5, j + 5], "f1": {"overall": 0.5}, "f1_ci": [0.45, 0.55],
                "vs_baseline": {} if verdict is None else
                {"j": {"verdict": verdict, "diff": j - 50.0, "ci": [1.0, 2.0]},
                 "f1": {"verdict": "not distinguishable", "diff": 0.0, "ci": [-1.0, 1.0]}}}
    return {"sweep": "sweep judge.temperature=0.0,0.5,1.0", "swept_keys": ["judge.temperature"], "n_jobs": 3,
            "n_failed": 0, "baseline": {"job": 0, "label": "judge.temperature=0.0"},
            "rows": [row(0, "0.0", 50.0, None), row(1, "0.5", 70.0, "A higher"),
                     row(2, "1.0", 48.0, "not distinguishable")]}


def test_sweep_description_has_j_f1_intervals_and_verdicts() -> None:
    lines = sweep_description(_sweep_rows()).splitlines()
    assert lines[0] == ("Sweep over `judge.temperature`: 3 job(s), 0 failed; baseline: "
                        "judge.temperature=0.0.")
    assert lines[2] == ("- judge.temperature=0.0: **J 50.00 [45.00, 55.00]** baseline; "
                        "F1 50.00 [45.00, 55.00] baseline")
    assert lines[3] == ("- judge.temperature=0.5: **J 70.00 [65.00, 75.00]** higher (+20.00); "
                        "F1 50.00 [45.00, 55.00] not distinguishable (+0.00)")


def test_headline_opens_on_j_then_f1() -> None:
    kept = headline_metrics({"f1/cat1_multi_hop": 1.0, "f1/overall": 2.0, "j/cat1_multi_hop": 3.0,
                             "j/overall_ci_low": 4.0, "j/overall": 5.0})
    assert list(kept) == ["j/overall", "f1/overall", "j/overall_ci_low", "f1/cat1_multi_hop",
                          "j/cat1_multi_hop"]


def test_sweep_plot_is_drawn_with_intervals(tmp_path: Path) -> None:
    path = plot_sweep(_sweep_rows(), tmp_path / "sweep_plot.png")
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_row_reads_each_jobs_95_interval(tmp_path: Path) -> None:
    from locomo_exp.sweep.job_files import JobRecord

    record = JobRecord(job=0, overrides=[], swept={"judge.temperature": "0.0"}, run_name="T=0.0",
                       status="COMPLETED", output_dir=str(tmp_path))
    summary = {"analysis": {"bootstrap": {"f1": {"overall": [0.4, 0.6]}, "j_mean": {"overall": [70.0, 80.0]}}}}
    row = summary_row(record, summary)
    assert (row["f1_ci"], row["j_ci"]) == ([0.4, 0.6], [70.0, 80.0])
    assert summary_row(record, {"analysis": {"bootstrap": {"f1": {"overall": None}}}})["f1_ci"] is None
