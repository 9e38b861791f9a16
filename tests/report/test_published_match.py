"""Published numbers beside a run: subsets, task averages over fewer types, same judge or not.

Trial 5 #9 and #10: a 5-question LongMemEval subset sat beside full-benchmark published
figures with no warning and a "task-averaged" figure over 1 of 6 types; a faithful Mem0-style
replication (gpt-4o-mini-2024-07-18, a binary template) was called "template vs binary" and
"gpt-4o-mini-2024-07-18 vs gpt-4o-mini", like any other judge.
"""

from __future__ import annotations

from pathlib import Path

from lme_helpers import GPT4O, REFERENCE, need_shared

from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.benchmarks.longmemeval.report import console_table
from locomo_exp.benchmarks.longmemeval.tracking import run_metrics
from locomo_exp.report.card import baseline_card_differences
from locomo_exp.report.judge_match import published_judge_match, template_protocol_note
from locomo_exp.results.model_ids import DIFFERENT, SAME, SAME_FAMILY, model_match


def test_a_longmemeval_subset_says_so_and_has_no_task_average(typed_config, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    need_shared()
    five = tmp_path / "five.jsonl"
    five.write_text("".join(Path(GPT4O).read_text().splitlines(keepends=True)[:5]))
    cfg = typed_config("data=file", "tracking=none", f"data.path={five}",
                       f"data.reference={REFERENCE}")
    result = run_longmemeval(cfg, tmp_path / "out", tmp_path)
    figures = result.summary["headline"]["figures"]
    present = len(figures["task_avg"]["types"])
    assert present < 6
    text = console_table(result.summary).splitlines()
    (task,) = [line for line in text if line.startswith("task-averaged")]
    assert task.endswith(f"not measured ({present} of 6 question types present)")
    subset = ("Subset: 5 of 500 reference questions scored (495 without an answer row): not "
              "comparable with full-benchmark figures (the published ones included)")
    assert subset in text
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.splitlines()[2] == f"**{subset}.**"  # at the top, before any figure
    assert f"| task-averaged | not measured ({present} of 6 question types present) |" in report
    published = report.split("## Published LongMemEval figures")[1]
    assert f"**{subset}.**" in published.split("| system |")[0]
    metrics = run_metrics(result.summary)
    assert "lme_stored/task_avg" not in metrics and "lme_stored/overall" in metrics


def test_model_ids_are_compared_after_snapshot_resolution() -> None:
    assert model_match("gpt-4o-mini-2024-07-18", "gpt-4o-mini") == SAME_FAMILY
    assert model_match("claude-sonnet-4-5-20250929", "claude-sonnet-4-5") == SAME_FAMILY
    assert model_match("gpt-4o-2024-08-06", "gpt-4o-mini") == DIFFERENT
    assert model_match("gpt-4o", "gpt-4o") == SAME
    assert model_match(None, "gpt-4o") is None


MEM0_CARD = {"question_set": "1,540",
             "judge": {"model": "gpt-4o-mini", "model_snapshot": None, "protocol": "binary",
                       "temperature": None, "runs": None}}


def _template_card(scores: list[float]) -> dict:  # type: ignore[type-arg]
    return {"question_set": "1,540", "judge": {
        "model": "gpt-4o-mini-2024-07-18", "protocol": "template", "temperature": 0.0,
        "template": {"name": "mem0-judge-my-copy", "version": "1", "verdict_scores": scores,
                     "rule": "json_key 'label': CORRECT=100, WRONG=0"}}}


def test_a_binary_template_is_not_template_vs_binary_and_a_snapshot_is_the_same_model() -> None:
    card = _template_card([0.0, 100.0])
    assert baseline_card_differences(card, MEM0_CARD) == [
        "judge.model: gpt-4o-mini-2024-07-18 vs gpt-4o-mini (same model, snapshot differs or "
        "unknown)"
    ]
    assert template_protocol_note(card, MEM0_CARD) == (
        "template mem0-judge-my-copy@1 gives the binary protocol's verdicts: matches binary "
        "verdicts (reply read by json_key 'label': CORRECT=100, WRONG=0); not verifiable here: "
        "its prompt text against the publication's (compare them yourself)"
    )
    graded = _template_card([0.0, 50.0, 100.0])  # a three-level template is another protocol
    assert "judge.protocol: template vs binary" in baseline_card_differences(graded, MEM0_CARD)
    assert template_protocol_note(graded, MEM0_CARD) is None


def test_the_published_table_says_whether_this_run_used_the_same_judge() -> None:
    own = "LongMemEval's own prompts"
    judged = {"source": "judge", "judge_model": "gpt-4o, protocol longmemeval"}
    assert published_judge_match(judged, "gpt-4o-2024-08-06", own) == (
        "model: same model, snapshot differs or unknown; prompt: no (this project's own words, "
        "not LongMemEval's own prompts)")
    assert published_judge_match(judged, "gpt-4o-mini-2024-07-18", own) == (
        "no: another model (gpt-4o)")
    stored = {"source": "stored", "judge_model": "gpt-4o-2024-08-06"}
    assert published_judge_match(stored, "gpt-4o-2024-08-06", own) == (
        "model: same model; prompt: not recorded with the stored labels")


def test_the_j_table_vs_mem0_calls_a_faithful_replication_the_same_judge() -> None:
    from conftest import CONF_DIR
    from hydra import compose, initialize_config_dir

    from locomo_exp.config import register_configs, to_experiment_config
    from locomo_exp.report.baselines import render_j_comparison
    from locomo_exp.results import RunSummary

    register_configs()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        baseline = to_experiment_config(compose(config_name="config")).baselines["mem0_paper_j"]
    j = {"overall": {"mean": 70.0, "count": 2}, "1": {"mean": 70.0, "count": 2}}
    summary = {
        "input": {"path": "x.json", "sha256": "s", "format": "qa_results"},
        "versions": {}, "category_names": {"1": "multi_hop"},
        "counts": {"1": 2, "2": 0, "3": 0, "4": 0, "5": 0, "overall_1_4": 2, "overall": 2},
        "conversations": {"1": 1, "2": 0, "3": 0, "4": 0, "5": 0, "overall_1_4": 1, "overall": 1},
        "metrics": {}, "latency": {}, "status": {"judge": "ok"},
        "judge": {"protocol": "template", "prompt_version": "t", "model": "gpt-4o-mini-2024-07-18",
                  "temperature": 0.0, "runs": 1, "mode": "realtime", "categories": [1, 2, 3, 4],
                  "j": j, "counts": {}, "tokens": {}, "estimated_cost_usd": None,
                  "prompt_too_long_questions": [],
                  "template": {"name": "mine", "version": "1", "verdict_scores": [0, 100]}},
    }
    text = render_j_comparison(RunSummary.from_json(summary), baseline)
    assert "Indicative only" not in text
    assert ("- same judge model (gpt-4o-mini-2024-07-18 is a snapshot of gpt-4o-mini; the "
            "publication's snapshot is not stated) and protocol (a binary template: its prompt "
            "text is not verifiable against the publication's)") in text
    summary["judge"]["template"]["verdict_scores"] = [0, 50, 100]  # graded: another protocol
    assert "Indicative only" in render_j_comparison(RunSummary.from_json(summary), baseline)
