"""MLflow as a user sees it: names, one percent scale, experiment kind, what each run carries.

Pure naming functions are tested on hand-made summaries with exact values; the store
tests log to a SQLite store in ``tmp_path`` and read it back with ``MlflowClient``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from conftest import Composer
from fake_anthropic import FakeAnthropicServer, rubric

from locomo_exp import tracking
from locomo_exp.experiment import LOG_FILE, run_experiment

# ----------------------------------------------------------------------------- run names


@pytest.mark.parametrize(
    ("swept", "model", "scorer", "name"),
    [
        pytest.param(
            {"judge.temperature": "0.5"}, "claude-sonnet-4-6", "both", "T=0.5 · sonnet-4-6 · both",
            id="temperature-first",
        ),
        pytest.param(
            {"judge.model": "claude-haiku-4-5-20251001"}, "claude-haiku-4-5-20251001", "judge",
            "haiku-4-5 · judge", id="model-swept-not-repeated",
        ),
        pytest.param(
            {"judge": "opus-4-6", "judge.temperature": "0.0"}, "claude-opus-4-6", "both",
            "opus-4-6 · T=0.0 · both", id="judge-preset",
        ),
        pytest.param(
            {"scorer": "f1"}, None, "f1", "f1", id="scorer-swept-not-repeated",
        ),
        pytest.param(
            {"f1.variant": "squad"}, None, "f1", "f1.variant=squad · f1",
            id="other-key-as-key=value",
        ),
        pytest.param({}, None, None, "job", id="nothing"),
    ],
)
def test_child_run_name_puts_the_swept_value_first(
    swept: dict[str, str], model: Any, scorer: Any, name: str
) -> None:
    assert tracking.child_run_name(swept, model=model, scorer=scorer) == name


def test_sweep_value_label_is_a_legal_metric_name_part() -> None:
    assert tracking.sweep_value_label({"judge.temperature": "0.5"}) == "T:0.5"
    assert tracking.sweep_value_label(
        {"judge.temperature": "0.5", "judge.model": "claude-sonnet-4-6"}
    ) == "T:0.5 sonnet-4-6"
    assert tracking.sweep_value_label({"data.format": "a=b"}) == "data.format:a_b"
    assert tracking.sweep_value_label({"data.path": "runs/a=b.json"}) == "a_b"  # file name only


def test_parent_metrics_give_each_swept_value_its_headlines_in_percent() -> None:
    rows = [
        {"status": "COMPLETED", "swept": {"judge.temperature": "0.0"}, "f1": {"overall": 0.4821},
         "j_overall": 61.25, "j_std_across_runs": 1.5, "estimated_cost_usd": 0.012},
        {"status": "COMPLETED", "swept": {"judge.temperature": "0.5"}, "f1": {"overall": 0.5},
         "j_overall": None, "j_std_across_runs": None, "estimated_cost_usd": None},
        {"status": "FAILED", "swept": {"judge.temperature": "1.0"}, "f1": {}, "j_overall": None},
    ]

    assert tracking.parent_metrics(rows) == {
        "sweep/T:0.0/f1_overall": pytest.approx(48.21),
        "sweep/T:0.0/j_overall": 61.25,
        "sweep/T:0.0/j_std_across_runs": 1.5,
        "sweep/T:0.0/estimated_cost_usd": 0.012,
        "sweep/T:0.5/f1_overall": 50.0,
    }
    assert tracking.parent_params({"judge.temperature": ["0.0", "0.5", "0.5"]}) == {
        "judge.temperature": "0.0, 0.5"
    }
    table = tracking.sweep_table(rows, ["judge.temperature"])
    assert [r["judge.temperature"] for r in table] == ["0.0", "0.5", "1.0"]
    assert table[0]["f1_overall"] == pytest.approx(48.21)


# ----------------------------------------------------------------------------- one scale


def _summary(judge_categories: list[int]) -> dict[str, Any]:
    def group(mean: Any, count: int) -> dict[str, Any]:
        return {"mean": mean, "count": count, "std_across_runs": 2.0, "pooled_within_std": None}

    j = {"1": group(50.0, 2), "2": group(100.0, 1), "3": group(0.0, 1), "4": group(75.0, 4)}
    if 5 in judge_categories:
        j["5"] = group(20.0, 2)
    j["overall"] = group(123.0, 8)  # a marker: used as is only when exactly 1-4 were judged
    return {
        "input": {"n_skipped_records": 1, "n_missing_predictions": 0, "n_excluded_no_gold": 0},
        "counts": {"1": 2, "overall_1_4": 8, "overall": 10},
        "metrics": {
            "f1": {"overall": {"mean": 0.25}, "1": {"mean": 0.5}},
            "f1_squad": {"overall": {"mean": 0.125}},
            "bleu1": {"overall": {"mean": 0.75}, "5": {"mean": None}},
        },
        "stored_judge": {"overall": {"mean": 55.5}},
        "latency": {"total_latency_s": {"p50": 1.25, "p95": 3.0, "mean": float("nan")}},
        "analysis": {"bootstrap": {"f1": {"overall": [0.2, 0.3], "5": None},
                                   "j_mean": {"overall_1_4": [60.0, 70.0]}}},
        "judge": {"categories": judge_categories, "j": j, "counts": {"valid": 8, "api_error": 0},
                  "tokens": {"input": 100, "output": 10}, "estimated_cost_usd": 0.5},
    }


def test_every_score_metric_is_percent_and_counts_stay_counts() -> None:
    metrics = tracking.run_metrics(_summary([1, 2, 3, 4]), {1: "multi_hop", 5: "adversarial"})

    assert metrics["f1/overall"] == 25.0
    assert metrics["f1/cat1_multi_hop"] == 50.0
    assert metrics["f1_squad/overall"] == 12.5
    assert metrics["bleu1/overall"] == 75.0
    assert "bleu1/cat5_adversarial" not in metrics  # None is not logged
    assert metrics["f1/overall_ci_low"] == pytest.approx(20.0)
    assert metrics["f1/overall_ci_high"] == pytest.approx(30.0)
    assert metrics["j/overall_1_4_ci_low"] == 60.0 and metrics["j/overall_1_4_ci_high"] == 70.0
    assert metrics["stored_judge/overall"] == 55.5
    assert metrics["j/cat1_multi_hop"] == 50.0
    # counts, seconds and dollars keep their units
    assert metrics["n_questions/overall"] == 10 and metrics["n_questions/cat1_multi_hop"] == 2
    assert metrics["latency/total_latency_s_p50"] == 1.25
    assert "latency/total_latency_s_mean" not in metrics  # NaN never reaches MLflow
    assert metrics["data/skipped_records"] == 1
    assert metrics["judge/input_tokens"] == 100 and metrics["judge/estimated_cost_usd"] == 0.5


def test_j_overall_1_4_is_logged_beside_its_confidence_bounds() -> None:
    judged_1_4 = tracking.run_metrics(_summary([1, 2, 3, 4]), {})
    assert judged_1_4["j/overall_1_4"] == 123.0  # the judge's own overall over 1-4

    judged_1_5 = tracking.run_metrics(_summary([1, 2, 3, 4, 5]), {})
    # questions of 1-4 pooled: (50*2 + 100*1 + 0*1 + 75*4) / 8
    assert judged_1_5["j/overall_1_4"] == 62.5
    assert judged_1_5["j/overall"] == 123.0

    partial = _summary([1, 2])
    partial["judge"]["j"] = {k: v for k, v in partial["judge"]["j"].items() if k in ("1", "2")}
    assert "j/overall_1_4" not in tracking.run_metrics(partial, {})


def test_a_dry_run_logs_only_its_estimate() -> None:
    judge = {"dry_run_estimate": {"calls_to_make": 160, "estimated_input_tokens": 5000,
                                  "estimated_output_tokens": 900, "estimated_cost_usd": None},
             "j": {}, "counts": {"valid": 0}}
    assert tracking.judge_metrics(judge, {}) == {
        "judge/dry_run_calls": 160.0,
        "judge/dry_run_input_tokens": 5000.0,
        "judge/dry_run_output_tokens": 900.0,
    }


def test_batch_ids_param_is_cut_after_a_whole_id() -> None:
    ids = [f"msgbatch_{i:04d}" for i in range(1000)]
    text = tracking.joined_ids(ids)
    assert len(text) <= tracking.MAX_PARAM_VALUE_CHARS
    assert text.startswith("msgbatch_0000,msgbatch_0001,")
    assert text.endswith(" more; see summary.json)")


# ----------------------------------------------------------------------------- the store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite store for the module (creating one costs seconds of schema migrations)."""
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'mlflow.db'}"


def _client(uri: str) -> Any:
    import mlflow

    return mlflow.MlflowClient(tracking_uri=uri)


def test_new_experiment_is_a_model_training_experiment(tmp_path: Path, store: str) -> None:
    uri = store
    experiment_id = tracking.ensure_experiment(uri, "fresh")

    experiment = _client(uri).get_experiment(experiment_id)
    assert experiment.tags[tracking.EXPERIMENT_KIND_TAG] == "custom_model_development"
    assert tracking.ui_url(experiment_id) == (
        f"http://127.0.0.1:5000/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
    )


def test_existing_experiment_keeps_the_kind_its_owner_chose(tmp_path: Path, store: str) -> None:
    uri = store
    client = _client(uri)
    experiment_id = client.create_experiment(
        "mine", tags={"mlflow.experimentKind": "genai_development"}
    )

    assert tracking.ensure_experiment(uri, "mine") == experiment_id
    assert client.get_experiment(experiment_id).tags["mlflow.experimentKind"] == "genai_development"


def test_f1_only_run_logs_no_judge_params_and_f1_in_percent(
    tmp_path: Path, typed_config: Composer, store: str  # noqa: F811
) -> None:
    uri = store
    cfg = typed_config(f"tracking.uri={uri}", "tracking.experiment=f1_only")
    result = run_experiment(cfg, tmp_path / "out", tmp_path)

    run = _client(uri).get_run(result.run_id)
    assert not [key for key in run.data.params if key.startswith("judge.")]
    assert run.data.params["scorer.name"] == "f1"
    assert run.data.metrics["f1/overall"] == pytest.approx(
        100 * result.summary["metrics"]["f1"]["overall"]["mean"]
    )
    assert 0 <= run.data.metrics["f1/overall"] <= 100 and run.data.metrics["f1/overall"] > 1


def test_judge_run_logs_judge_params_and_j_overall_1_4(
    tmp_path: Path,
    typed_config: Composer,  # noqa: F811
    fake_anthropic: FakeAnthropicServer,
    store: str,
) -> None:
    fake_anthropic.responder = lambda request: rubric(80)
    uri = store
    cfg = typed_config(
        f"tracking.uri={uri}",
        "tracking.experiment=with_judge",
        "scorer=both",
        "judge.runs=1",
        "judge.audit.n=0",  # off on purpose: capped to 0 controls it would lead with a warning
        "judge.progress=false",
        f"judge.base_url={fake_anthropic.url}",
        f"judge.cache_path={tmp_path / 'cache.sqlite'}",
    )

    result = run_experiment(cfg, tmp_path / "out", tmp_path)

    run = _client(uri).get_run(result.run_id)
    assert run.data.params["judge.model"] == cfg.judge.model
    assert run.data.params["judge.prompt_version"] == result.summary["judge"]["prompt_version"]
    assert run.data.params["judge.mode"] == "realtime"
    # no tag repeats a param (issue 30 §4: the runs table's columns, not 330 of them)
    assert not set(run.data.tags) & set(run.data.params), set(run.data.tags) & set(run.data.params)
    own = {t for t in run.data.tags if not t.startswith("mlflow.")}
    assert own == {"locomo_exp.output_dir", "run.status", "run.warnings"} or own == {
        "locomo_exp.output_dir"}, own
    assert run.data.params["tool.version"] and run.data.params["data.file"] == "qa_results.json"
    assert run.data.params["scorer.name"] == "both" and run.data.params["f1.variant"] == "locomo"
    assert run.data.metrics["j/overall"] == 80.0
    assert run.data.metrics["j/overall_1_4"] == 80.0  # judged categories 1-4 (the default)
    assert "j/overall_1_4_ci_low" in run.data.metrics
    # what MLflow's pages show first (issue 20 §3): the headline, the measurement, the note
    metrics = run.data.metrics
    assert len(metrics) <= 60
    assert {"f1/cat3_open_domain", "j/cat3_open_domain", "judge/api_errors"} <= set(metrics)
    # per-category intervals: a table (and metrics.json), not metrics (issue 20 §3's budget)
    assert not [n for n in metrics if "/cat" in n and n.endswith(("_ci_low", "_ci_high"))]
    artifacts = {a.path for a in _client(uri).list_artifacts(result.run_id)}
    assert {"intervals_table.json", "metrics.json", "scores_table.json"} <= artifacts
    lexical = [name for name in metrics if name.startswith(("bleu1/", "f1_squad/", "f1_mem0/"))]
    assert sorted(lexical) == ["bleu1/overall", "f1_mem0/overall", "f1_squad/overall"]
    assert len(metrics) <= 60, len(metrics)
    params = run.data.params
    assert len(params) <= 40, sorted(params)
    assert {"judge.temperature", "judge.protocol", "judge.prompt_version", "question_set", "data.sha256",
            "f1.version"} <= set(params)
    assert not [key for key in params if key.startswith(("judge.batch.", "judge.model_info.", "tracking."))]
    note = run.data.tags["mlflow.note.content"]
    low, high = metrics["j/overall_ci_low"], metrics["j/overall_ci_high"]
    assert note.startswith(f"**J 80.00** [{low:.2f}, {high:.2f}] · **F1 (locomo) ")
    assert f"Judge: {cfg.judge.model} (rubric, temperature 0.5, 1 run(s)" in note
    assert "Status: f1 ok, judge ok" in note


@pytest.mark.parametrize("fails", [False, True], ids=["finished", "failed"])
def test_the_job_log_is_uploaded_whatever_the_run_ends(
    tmp_path: Path, store: str, fails: bool
) -> None:
    uri = store
    log_file = tmp_path / LOG_FILE
    handler = logging.FileHandler(log_file)
    logging.getLogger().addHandler(handler)
    try:
        with pytest.raises(RuntimeError) if fails else _nothing():
            with tracking.mlflow_run(tracking.RunSpec(uri, "e", "r"), log_file=log_file) as run:
                logging.getLogger("locomo_exp.test").warning("a line of the job's log")
                if fails:
                    raise RuntimeError("boom")
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()

    client = _client(uri)
    assert client.get_run(run.info.run_id).info.status == ("FAILED" if fails else "FINISHED")
    local = client.download_artifacts(run.info.run_id, LOG_FILE, str(tmp_path / "down"))
    assert "a line of the job's log" in Path(local).read_text()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False
