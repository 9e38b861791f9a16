"""Baselines, report tables, uncertainty, reliability and error analysis."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CONF_DIR
from hydra import compose, initialize_config_dir

from locomo_exp.config import (
    DataConfig,
    ExperimentConfig,
    FieldMap,
    register_configs,
    to_experiment_config,
)
from locomo_exp.data import load_results
from locomo_exp.report import render_report
from locomo_exp.report.baselines import values_by_category, weighted_overall
from locomo_exp.report.locomo_run import score_rows
from locomo_exp.results import QARecord
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.summary import analyse, build_summary, judge_reliability
from locomo_exp.stats.bootstrap import bootstrap_ci
from locomo_exp.tracking import run_metrics


@pytest.fixture(scope="module")
def default_config() -> ExperimentConfig:
    register_configs()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        return to_experiment_config(compose(config_name="config"))


def _record(qid: str, category: int, gold: str, prediction: str) -> QARecord:
    return QARecord(question_id=qid, question=f"question {qid}?", ground_truth=gold,
                    prediction=prediction, category=category, conversation_id="c1")


def _summary(records, judge=None, judge_rows=None, cfg: ExperimentConfig | None = None):
    cfg = cfg or ExperimentConfig()
    lexical = score_lexical(records, "locomo")
    rows = score_rows(records, lexical, cfg.category_names, judge_rows)
    analysis = analyse(rows, protocol=(judge or {}).get("protocol"), bootstrap_samples=200, seed=1)
    summary = build_summary(records, lexical, input_info={"path": "x.json", "sha256": "abc", "format": "qa_results"},
                            versions={"f1": "v"}, category_names=cfg.category_names, judge=judge, analysis=analysis)
    return summary, rows


# ---------------------------------------------------------------- baselines


def test_mem0_j_per_category_weighted_gives_published_overall_only_under_id_mapping(default_config) -> None:
    baseline = default_config.baselines["mem0_paper_j"]
    mem0 = next(s for s in baseline.systems if s.name == "Mem0")
    by_id = values_by_category(baseline, mem0)
    assert by_id == {1: 67.13, 3: 51.15, 2: 55.51, 4: 72.93}
    assert weighted_overall(by_id) == pytest.approx(66.88, abs=0.005)
    # the names taken at face value (single_hop=4, multi_hop=1, temporal=2, open_domain=3)
    by_name = {4: 67.13, 1: 51.15, 2: 55.51, 3: 72.93}
    assert abs(weighted_overall(by_name) - 66.88) > 1.0


def test_every_mem0_j_system_with_categories_reproduces_its_overall(default_config) -> None:
    baseline = default_config.baselines["mem0_paper_j"]
    for system in baseline.systems:
        if system.categories:
            assert weighted_overall(values_by_category(baseline, system)) == pytest.approx(system.overall, abs=0.02), system.name


def test_baselines_selectable_and_user_yaml_validated(default_config) -> None:
    assert set(default_config.baselines) == {"locomo_paper", "mem0_paper_f1", "mem0_paper_j", "mem0_paper_latency"}
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        only = to_experiment_config(compose(config_name="config", overrides=["baselines=[mem0_paper_j]"]))
        assert list(only.baselines) == ["mem0_paper_j"]
        with pytest.raises(Exception, match="metric"):
            to_experiment_config(compose(config_name="config", overrides=["+baselines.mine.metric=accuracy",
                                                                           "+baselines.mine.title=t",
                                                                           "+baselines.mine.source=s"]))


# ---------------------------------------------------------------- report tables


def test_report_on_hand_made_results_has_na_for_empty_category(default_config) -> None:
    records = [_record("a", 1, "x, y", "x"), _record("b", 4, "cat", "cat"), _record("c", 4, "dog", "cow")]
    summary, _ = _summary(records, cfg=default_config)
    text = render_report(summary, default_config.baselines)
    assert "| 2 temporal | 0 | n/a |" in text
    assert "nan" not in text.lower()
    assert "Subset: 3 questions from 1 conversation" in text
    # category 4: F1 mean of 1.0 and 0.0 -> 50.00 percent
    assert "| 4 single_hop | 2 | 50.00 |" in text


def test_judge_run_where_every_call_failed_shows_na_never_nan(default_config) -> None:
    records = [_record("a", 1, "x", "x"), _record("b", 2, "y", "z")]
    judge = {
        "protocol": "rubric", "model": "claude-sonnet-4-6", "runs": 3, "prompt_version": "p",
        "j": {"1": {"mean": None, "count": 0, "std_across_runs": None, "pooled_within_std": None},
              "overall": {"mean": None, "count": 0, "std_across_runs": None, "pooled_within_std": None}},
        "counts": {"valid": 0, "parse_failure": 0, "api_error": 6},
    }
    rows = {qid: {"j_mean": None, "j_std": None, "j_run_count": 0,
                  "j_runs": [{"run": r, "outcome": "api_error", "score": None} for r in range(3)]}
            for qid in ("a", "b")}
    summary, _ = _summary(records, judge=judge, judge_rows=rows, cfg=default_config)
    text = render_report(summary, default_config.baselines)
    assert "nan" not in text.lower()
    assert "| 1 multi_hop | 0 | n/a | n/a | n/a |" in text
    metrics = run_metrics(summary, default_config.category_names)
    assert all(v == v for v in metrics.values())  # no NaN


def test_j_comparison_says_indicative_when_protocols_differ(default_config) -> None:
    records = [_record("a", 1, "x", "x"), _record("b", 4, "y", "y")]
    judge = {"protocol": "rubric", "model": "claude-sonnet-4-6", "runs": 2, "prompt_version": "p",
             "j": {"1": {"mean": 80.0, "count": 1, "std_across_runs": 1.0},
                   "4": {"mean": 90.0, "count": 1, "std_across_runs": 2.0},
                   "overall_1_4": {"mean": 85.0, "count": 2, "std_across_runs": 0.5},
                   "overall": {"mean": 85.0, "count": 2, "std_across_runs": 0.5}},
             "counts": {"valid": 4, "parse_failure": 0, "api_error": 0}}
    rows = {"a": {"j_mean": 80.0, "j_runs": [{"run": 0, "outcome": "valid", "score": 80}, {"run": 1, "outcome": "valid", "score": 80}]},
            "b": {"j_mean": 90.0, "j_runs": [{"run": 0, "outcome": "valid", "score": 90}, {"run": 1, "outcome": "valid", "score": 90}]}}
    summary, _ = _summary(records, judge=judge, judge_rows=rows, cfg=default_config)
    text = render_report(summary, default_config.baselines)
    assert "Indicative only" in text
    assert "| **this run** | 80.00 ± 1.00 | n/a | n/a | 90.00 ± 2.00 | 85.00 ± 0.50 |" in text
    assert "| Mem0 | 67.13 | 55.51 | 51.15 | 72.93 | 66.88 |" in text
    assert "Questions whose valid runs all agree: 100.0% of 2" in text


def test_memobase_report_puts_mem0_f1_next_to_mem0_paper_rows_by_category(shared_data: Path, default_config) -> None:
    loaded = load_results(shared_data / "predictions" / "memobase_eval_0710.json", DataConfig(format="mem0"))
    summary, _ = _summary(loaded.records, cfg=default_config)
    text = render_report(summary, default_config.baselines)
    # our Mem0-harness F1 per category 1..4 and overall (memobase README: 46.29/64.23/22.93/51.55, 51.45)
    assert "| **this run (f1_mem0)** | 46.29 | 64.23 | 22.93 | 51.55 | 51.45 |" in text
    # Mem0's own row: single_hop (cat 1) 38.72, temporal (cat 2) 48.93, multi_hop (cat 3) 28.64, open_domain (cat 4) 47.65
    assert "| Mem0 | 38.72 | 48.93 | 28.64 | 47.65 | — |" in text
    assert "1 multi_hop (their label: single_hop)" in text


def test_latency_table_reads_milliseconds_as_seconds(tmp_path: Path, default_config) -> None:
    records = [QARecord(question_id=str(i), question="q", ground_truth="a", prediction="a", category=4,
                        total_latency_s=ms / 1000) for i, ms in enumerate([1000.0, 2000.0, 3000.0])]
    summary, _ = _summary(records, cfg=default_config)
    text = render_report(summary, default_config.baselines)
    assert "| total latency p50 (s) | 2.000 | 0.708 |" in text
    assert "| search latency p50 (s) | not in input | 0.148 |" in text


# ---------------------------------------------------------------- analysis


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0, 1.0] * 50
    first = bootstrap_ci(values, 500, seed=3)
    assert first == bootstrap_ci(values, 500, seed=3)
    assert first[0] < 0.5 < first[1]
    assert bootstrap_ci([], 500) is None


def test_krippendorff_alpha_perfect_agreement_and_levels() -> None:
    rows = [{"category": 1, "j_runs": [{"run": r, "outcome": "valid", "score": s} for r in range(3)]}
            for s in (0, 100, 100, 0)]
    result = judge_reliability(rows, "binary")
    assert result["level"] == "nominal"
    assert result["krippendorff_alpha"] == pytest.approx(1.0)
    assert result["unanimous_share"] == 1.0
    rows[0]["j_runs"][1]["score"] = 100
    rows[0]["j_runs"][2] = {"run": 2, "outcome": "parse_failure", "score": None}
    disagree = judge_reliability(rows, "rubric")
    assert disagree["level"] == "interval"
    assert disagree["krippendorff_alpha"] < 1.0
    assert disagree["unanimous_share"] == 0.75


def test_error_analysis_lists_extremes_and_disagreements(default_config) -> None:
    records = [_record(str(i), 4, "blue car", p) for i, p in enumerate(["blue car", "red car", "green bike", "blue", "car"])]
    rows = {str(i): {"j_mean": j, "j_runs": []} for i, j in enumerate([100.0, 0.0, 0.0, 100.0, 0.0])}
    summary, _ = _summary(records, judge={"protocol": "binary", "j": {}}, judge_rows=rows, cfg=default_config)
    extremes = summary.analysis.extremes["f1"]
    assert extremes.top[0].question_id == "0"
    assert extremes.bottom[0].question_id == "2"
    gaps = summary.analysis.disagreements
    # "car" vs "blue car": F1 = 2/3 but J = 0 -> gap -66.7 is the largest in absolute value
    assert gaps[0].question_id == "4" and gaps[0].gap == pytest.approx(-100 * 2 / 3)
    assert [g.question_id for g in gaps[:2]] == ["4", "1"]  # then "red car": F1 0.5, J 0


@pytest.mark.parametrize(
    ("file_name", "data_config", "published"),
    [
        pytest.param(
            "memobase_eval_0710.json", DataConfig(format="mem0"),
            # shared/data/README.md (memobase README): binary gpt-4o-mini J
            {"1": 70.92, "2": 85.05, "3": 46.88, "4": 77.17, "overall": 75.78},
            id="memobase-llm_score",
        ),
        pytest.param(
            "zep_locomo_grades.json",
            DataConfig(format="fields", fields=FieldMap(ground_truth="golden_answer", prediction="answer",
                                                                  judge_score="grade")),
            # zep-papers README: 74.11 / 66.04 / 67.71 / 79.79, overall 75.13 (question-weighted)
            {"1": 74.11, "2": 66.04, "3": 67.71, "4": 79.79, "overall": 75.13},
            id="zep-grade",
        ),
    ],
)
def test_stored_judge_verdicts_reproduce_published_j(shared_data: Path, default_config, file_name, data_config,
                                                    published) -> None:
    loaded = load_results(shared_data / "predictions" / file_name, data_config)
    summary, _ = _summary(loaded.records, cfg=default_config)
    stored = summary.stored_judge
    for key, value in published.items():
        assert stored[key].mean == pytest.approx(value, abs=0.0051)  # published to 2 decimals
    assert stored["overall"].count == 1540
    metrics = run_metrics(summary, default_config.category_names)
    assert metrics["stored_judge/overall"] == pytest.approx(published["overall"], abs=0.005)
    assert "## Judge verdicts stored in the input" in render_report(summary, default_config.baselines)


# ---------------------------------------------------------------- bounded-memory bootstrap


@pytest.mark.parametrize(("n", "n_samples"), [(1, 5), (7, 999), (1001, 300)])
def test_chunked_bootstrap_gives_the_interval_of_one_full_draw(
    monkeypatch: pytest.MonkeyPatch, n: int, n_samples: int
) -> None:
    import numpy as np

    import locomo_exp.stats.bootstrap as analysis

    values = [((i * 37) % 101) / 100 for i in range(n)]
    data = np.asarray(values)
    indices = np.random.default_rng(3).integers(0, n, size=(n_samples, n))  # the old one-shot draw
    low, high = np.quantile(data[indices].mean(axis=1), [0.025, 0.975])

    monkeypatch.setattr(analysis, "BOOTSTRAP_CHUNK_ELEMENTS", 10)  # many small chunks
    assert bootstrap_ci(values, n_samples, seed=3) == (float(low), float(high))


def test_bootstrap_never_draws_more_than_one_chunk_of_indices(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    import locomo_exp.stats.bootstrap as analysis

    sizes: list[int] = []
    real = np.random.Generator.integers
    make_rng = np.random.default_rng

    class Recording:
        def __init__(self, seed: int) -> None:
            self.rng = make_rng(seed)

        def integers(self, low: int, high: int, size: tuple[int, int]) -> np.ndarray:
            sizes.append(size[0] * size[1])
            return real(self.rng, low, high, size=size)

    monkeypatch.setattr(analysis.np.random, "default_rng", Recording)
    monkeypatch.setattr(analysis, "BOOTSTRAP_CHUNK_ELEMENTS", 50_000)
    bootstrap_ci([0.5] * 20_000, n_resamples=1000, seed=0)
    assert sizes == [40_000] * 500  # 2 resamples of 20,000 per chunk, never 1000 x 20,000
