"""A BEAM sweep row's cells and its pairing with the baseline job, without a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from beam_helpers import config, mem0_file, mem0_row

from locomo_exp.benchmarks.beam import PLUGIN
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.benchmarks.beam.run_log import beam_run_log
from locomo_exp.benchmarks.beam.sweep_rows import beam_row_fields, beam_vs_baseline
from locomo_exp.benchmarks.plugin import SweepPlugin
from locomo_exp.sweep.log_rows import log_row_fields


def test_the_beam_plugin_has_the_sweep_hooks() -> None:
    assert isinstance(PLUGIN, SweepPlugin)


def test_a_judged_runs_row_adds_item_and_alignment_calls() -> None:
    """The spend cells come from the run log (sweep/log_rows.py), which adds both call kinds."""
    summary = {
        "benchmark": "beam",
        "input": {"questions": 4, "chats": 2, "path": "/a.json", "sha256": "0", "layout": "x"},
        "verdicts": {"source": "judge", "judge_model": "m-1"},
        "figures": {},
        "judge": {
            "profile": "beam-official", "strict": True,
            "counts": {"parse_failure": 1, "api_error": 0},
            "tokens": {"input": 100, "output": 10, "cached_input": 50, "cached_output": 5},
            "estimated_cost_usd": 0.25, "estimated_cost_usd_including_cached": 0.4,
            "alignment": {"counts": {"parse_failure": 0, "api_error": 2},
                          "tokens": {"input": 30, "output": 3}, "estimated_cost_usd": 0.05},
        },
    }
    row = beam_row_fields(summary) | log_row_fields(beam_run_log(summary))
    assert row["beam"]["verdicts"] == "judge (m-1, beam-official strict)"
    assert (row["beam"]["pass_rate"], row["beam"]["official_mean"]) == (None, None)
    assert {k: row[k] for k in ("parse_failures", "api_errors", "input_tokens", "output_tokens",
                                "input_tokens_in_all", "output_tokens_in_all")
            } == {"parse_failures": 1, "api_errors": 2, "input_tokens": 130, "output_tokens": 13,
                  "input_tokens_in_all": 180, "output_tokens_in_all": 18}
    assert row["estimated_cost_usd"] == pytest.approx(0.25 + 0.05, abs=1e-12)
    assert row["cost_in_all_usd"] == pytest.approx(0.4 + 0.05, abs=1e-12)  # alignment: no cache


def test_a_stored_runs_row_has_no_judge_cells_and_other_runs_are_not_beams() -> None:
    row = beam_row_fields({"benchmark": "beam", "verdicts": {"source": "none"}, "figures": {}})
    assert row == {"beam": {"verdicts": "none", "questions": None, "chats": None,
                            "pass_rate": None, "pass_rate_ci": None, "avg_score": None,
                            "avg_score_ci": None, "official_mean": None,
                            "official_measured": None, "official_abilities": None},
                   "n_questions": None}  # headlines: the run log's (sweep/log_rows.py)
    assert PLUGIN.sweep_row({"benchmark": "longmemeval"}) is None


def test_a_job_against_a_baseline_with_no_scores_is_refused_in_its_row(tmp_path: Path) -> None:
    scored = mem0_file(tmp_path / "a.json", [mem0_row(0, 0, "abstention", [1, 0])])
    run_beam(config(scored), tmp_path / "ra", tmp_path)
    (tmp_path / "rb").mkdir()  # a judge dry run's directory: no figures, no scores
    (tmp_path / "rb" / "summary.json").write_text(json.dumps(
        {"benchmark": "beam", "figures": {}, "status": {"scoring": "judge dry run"}}))
    rows = [{"job": 1, "output_dir": str(tmp_path / "ra")}]
    beam_vs_baseline(rows, {"job": 0, "output_dir": str(tmp_path / "rb")}, tmp_path / "sw")
    assert rows[0]["vs_baseline"]["error"].startswith(f"{tmp_path / 'rb' / 'summary.json'}: "
                                                      "this BEAM run scored nothing")
    assert not (tmp_path / "sw").exists()  # nothing written for a refused pair


@pytest.mark.slow
def test_a_judged_beam_sweep_over_both_prompts_flags_the_pair_not_comparable(
    tmp_path: Path, fake_anthropic
) -> None:
    from conftest import run_cli
    from test_beam_judged import _answers, _respond

    fake_anthropic.responder = _respond
    _answers(tmp_path)
    done = run_cli("-m", "benchmark=beam", "scorer=judge", "data=file", "data.path=answers.json",
                   "judge.audit.n=0", "judge.progress=false", "beam.profile=nugget,official",
                   "tracking=none", "hydra.sweep.dir=sw", cwd=tmp_path, server=fake_anthropic)
    assert done.returncode == 0, done.stderr
    assert len(fake_anthropic.messages_requests()) == 2 * 12  # each prompt judges 12 items
    rows = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())["rows"]
    # the fake's verdicts 1, 0.5, 0 for items 0, 1, 2: questions of 1, 2, 3 items score
    # 1, 0.75, 0.5 in beam-nugget (mean 0.75; every one passes at >= 0.5)
    assert [(r["beam"]["verdicts"], r["beam"]["avg_score"], r["beam"]["pass_rate"],
             r["beam"]["official_measured"], r["beam"]["official_abilities"],
             r["parse_failures"], r["api_errors"], r["input_tokens"] > 0) for r in rows] == [
        ("judge (claude-sonnet-4-6, beam-nugget)", 0.75, 100.0, 3, 10, 0, 0, True),
        ("judge (claude-sonnet-4-6, beam-official)", 0.75, 100.0, 3, 10, 0, 0, True)]
    vs = rows[1]["vs_baseline"]["beam"]["beam-nugget"]
    assert (vs["n_pairs"], vs["difference"], vs["ci"], vs["pvalue"]) == (6, 0.0, [0.0, 0.0], 1.0)
    assert rows[1]["vs_baseline_warnings"] == [
        "NOT COMPARABLE: item verdicts judged under different profiles' prompts "
        "(beam-official vs beam-nugget)"]
    table = (tmp_path / "sw" / "sweep_summary.md").read_text()
    assert "| not measured (3/10 abilities) |" in table
    assert "- job 1: ⚠ NOT COMPARABLE: item verdicts judged under different profiles'" in table
