"""Several files as one result, runs, question sets, the canonical dataset and samples
(issue 10 items 9-12, issue 11 §5 data.limit)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_job

from locomo_exp.config import DataConfig
from locomo_exp.data import (
    DataValidationError,
    detect_question_set,
    load_data,
    load_results,
    pool_results,
)
from locomo_exp.data.sample import allocate
from locomo_exp.results import QARecord


def _write(tmp_path: Path, obj: object, name: str) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _qa(qid: str, question: str = "Q?", category: int = 4, **extra: object) -> dict:
    return {"question_id": qid, "question": question, "ground_truth": "A", "predicted_answer": "A",
            "category": category, **extra}


# ---------------------------------------------------------------- 9. pooling


def test_list_of_files_pools_with_question_ids_kept_distinct(tmp_path: Path) -> None:
    a = _write(tmp_path, [_qa("q1", llm_score=1), _qa("q2", llm_score=0)], "conv_a.json")
    _write(tmp_path, [_qa("q1", llm_score=1)], "conv_b.json")
    loaded = load_data(DataConfig(path=[str(a), "conv_b.json"]), tmp_path)
    assert [r.question_id for r in loaded.records] == ["conv_a/q1", "conv_a/q2", "conv_b/q1"]
    assert [r.conversation_id for r in loaded.records] == ["conv_a", "conv_a", "conv_b"]
    assert [s[0].name for s in loaded.sources] == ["conv_a.json", "conv_b.json"]
    assert round(loaded.stored_judge["groups"]["overall"]["mean"], 2) == 66.67
    assert loaded.path == a and len(loaded.sha256) == 64


def test_glob_pools_files_sorted_by_name_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "answers").mkdir()
    _write(tmp_path, [_qa("q1")], "answers/b.json")
    _write(tmp_path, [_qa("q1"), _qa("q2", category=2)], "answers/a.json")
    result = run_job(tmp_path, path="answers/*.json")
    assert result.summary["counts"]["overall"] == 3
    assert result.summary["conversations"]["overall"] == 2
    assert [s["path"].rsplit("/", 1)[1] for s in result.summary["input"]["sources"]] == ["a.json", "b.json"]
    rows = [json.loads(x) for x in (result.output_dir / "scores.jsonl").read_text().splitlines()]
    assert [r["question_id"] for r in rows] == ["a/q1", "a/q2", "b/q1"]


def test_same_file_names_in_two_folders_are_numbered(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    paths = [_write(tmp_path, [_qa("q1")], "x/run.json"), _write(tmp_path, [_qa("q1")], "y/run.json")]
    assert [r.question_id for r in pool_results(paths).records] == ["1-run/q1", "2-run/q1"]


def test_glob_matching_nothing_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(DataValidationError, match=r"nothing/\*.json: no file matches this pattern"):
        load_data(DataConfig(path="nothing/*.json"), tmp_path)


# ---------------------------------------------------------------- 10. runs


def test_two_runs_with_stored_j_50_and_100_give_75_00_pm_35_36(tmp_path: Path) -> None:
    run1 = _write(tmp_path, [_qa("q1", llm_score=1), _qa("q2", llm_score=0)], "run1.json")
    run2 = _write(tmp_path, [_qa("q1", llm_score=1), _qa("q2", llm_score=1)], "run2.json")
    runs = load_data(DataConfig(runs=[str(run1), str(run2)]), tmp_path)
    overall = runs.stored_j_across_runs()["overall"]
    assert overall["per_run"] == [50.0, 100.0]
    assert (round(overall["mean"], 2), round(overall["std"], 2)) == (75.00, 35.36)

    result = run_job(tmp_path, runs=["run1.json", "run2.json"])
    across = result.summary["stored_judge_detail"]["across_runs"]["overall"]
    assert (round(across["mean"], 2), round(across["std"], 2)) == (75.00, 35.36)
    assert result.summary["counts"]["overall"] == 2  # run 1 is the one scored


def test_runs_with_different_questions_are_refused(tmp_path: Path) -> None:
    run1 = _write(tmp_path, [_qa("q1"), _qa("q2")], "run1.json")
    run2 = _write(tmp_path, [_qa("q1"), _qa("q3")], "run2.json")
    with pytest.raises(DataValidationError, match=r"run2.json: data.runs: not the same questions as run1.json "
                                                  r"\(2 questions differ\)"):
        load_data(DataConfig(runs=[str(run1), str(run2)]), tmp_path)


# ---------------------------------------------------------------- 11. question sets


def _records(counts: dict[int, int]) -> list[QARecord]:
    return [QARecord(f"c{c}-{i}", f"Q{c}-{i}?", "A", "A", c) for c, n in counts.items() for i in range(n)]


@pytest.mark.parametrize(
    ("counts", "name"),
    [
        pytest.param({1: 282, 2: 321, 3: 96, 4: 841}, "1540", id="1540"),
        pytest.param({1: 282, 2: 321, 3: 96, 4: 841, 5: 446}, "1986", id="1986"),
        pytest.param({1: 282, 2: 321, 3: 96, 4: 841, 5: 2}, "1542", id="1542"),
        pytest.param({1: 3, 4: 5}, "custom", id="custom"),
    ],
)
def test_question_set_is_named_from_category_counts(counts: dict[int, int], name: str) -> None:
    assert detect_question_set(_records(counts)).name == name


def test_1542_set_names_the_two_category_5_questions(shared_data: Path, tmp_path: Path) -> None:
    samples = json.loads((shared_data / "locomo10.json").read_text())
    rows = [{"question": qa["question"], "ground_truth": qa["answer"], "predicted_answer": "x",
             "category": qa["category"], "conversation_id": sample["sample_id"]}
            for sample in samples for qa in sample["qa"] if "answer" in qa]  # as harnesses that keep `answer`
    loaded = load_results(_write(tmp_path, rows, "answers.json"))
    question_set = loaded.question_set
    assert (question_set.name, question_set.n_questions) == ("1542", 1542)
    assert question_set.extra == (
        "q152: Did Caroline make the black and white bowl in the photo?",
        "q153: Is Oscar Melanie's pet?",
    )
    assert "1,542 questions: categories 1-4 plus 2 category-5 questions" in question_set.describe()
    assert "Is Oscar Melanie's pet?" in question_set.describe()


def test_published_files_name_their_question_sets(shared_data: Path) -> None:
    predictions = shared_data / "predictions"
    assert load_results(predictions / "memobase_eval_0710.json").question_set.name == "1540"
    assert load_results(predictions / "honcho_locomo10_qa.json").question_set.name == "1986"


# ---------------------------------------------------------------- 12. the canonical dataset


def test_reference_matches_every_memobase_question_and_maps_conversations(shared_data: Path) -> None:
    config = DataConfig(reference=str(shared_data / "locomo10.json"))
    loaded = load_results(shared_data / "predictions" / "memobase_eval_0710.json", config)
    check = loaded.reference
    assert (check.matched, check.unmatched, check.category_differs) == (1540, 0, 0)
    assert len(set(check.conversations.values())) == 10


def test_reference_gives_categories_and_warns_about_changed_questions(shared_data: Path, tmp_path: Path, caplog) -> None:
    samples = json.loads((shared_data / "locomo10.json").read_text())
    conv = samples[0]
    rows = [{"question": qa["question"], "ground_truth": str(qa.get("answer", qa.get("adversarial_answer"))),
             "predicted_answer": "x", "conversation_id": "0"} for qa in conv["qa"][:20]]
    rows[3]["question"] = rows[3]["question"].replace("Caroline", "Carol")  # a renamed speaker
    rows[4]["question"] = rows[4]["question"].upper() + "  "  # normalised: still matched
    path = _write(tmp_path, rows, "no_categories.json")
    with pytest.raises(DataValidationError, match=r"record \[3\]: field 'category': missing category, and no record "
                                                  r"with the same conversation and question in data.reference"):
        load_results(path, DataConfig(reference=str(shared_data / "locomo10.json")))
    del rows[3]
    path = _write(tmp_path, rows + [{"question": "What is Carol's hobby?", "ground_truth": "x",
                                     "predicted_answer": "x", "conversation_id": "0", "category": 4}], "mixed.json")
    with caplog.at_level("WARNING"):
        loaded = load_results(path, DataConfig(reference=str(shared_data / "locomo10.json")))
    check = loaded.reference
    assert (check.matched, check.unmatched, check.categories_from_reference) == (19, 1, 19)
    assert check.conversations == {"0": conv["sample_id"]}
    assert [r.category for r in loaded.records[:19]] == [qa["category"] for i, qa in enumerate(conv["qa"][:20]) if i != 3]
    assert check.unmatched_examples == ["q19: What is Carol's hobby?"]
    assert "1 of 20 questions not found" in caplog.text


# ---------------------------------------------------------------- issue 11 §5: data.limit


def test_allocate_keeps_category_shares_by_largest_remainder() -> None:
    assert allocate({1: 282, 2: 321, 3: 96, 4: 841}, 100) == {1: 18, 2: 21, 3: 6, 4: 55}


def test_limit_draws_a_stratified_reproducible_sample_marked_as_subset(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "predictions" / "memobase_eval_0710.json"
    first = load_results(path, DataConfig(limit=100, seed=7))
    again = load_results(path, DataConfig(limit=100, seed=7))
    other = load_results(path, DataConfig(limit=100, seed=8))
    assert Counter(r.category for r in first.records) == {1: 18, 2: 21, 3: 6, 4: 55}
    assert [r.question_id for r in first.records] == [r.question_id for r in again.records]
    assert [r.question_id for r in first.records] != [r.question_id for r in other.records]
    assert [r.position for r in first.records] == sorted(r.position for r in first.records)
    assert first.subset == {"limit": 100, "seed": 7, "from": 1540,
                            "per_category": {"1": 18, "2": 21, "3": 6, "4": 55}}
    assert first.question_set.name == "1540"  # the file's set, before sampling

    result = run_job(tmp_path, path=str(path), limit=100, seed=7)
    assert result.summary["input"]["subset"]["from"] == 1540
    assert "**Subset: 100 questions from 10 conversations — not comparable" in (
        result.output_dir / "report.md").read_text()


def test_limit_below_one_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, [_qa("q1")], "a.json")
    with pytest.raises(DataValidationError, match="data.limit must be at least 1, got 0"):
        load_results(path, DataConfig(limit=0))


def test_data_path_list_and_runs_compose_from_the_command_line() -> None:
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from locomo_exp.config import register_configs, to_experiment_config

    register_configs()
    GlobalHydra.instance().clear()
    conf = Path(__file__).resolve().parents[2] / "locomo_exp" / "conf"
    with initialize_config_dir(version_base="1.3", config_dir=str(conf)):
        cfg = to_experiment_config(compose(config_name="config", overrides=[
            "data=file", "data.path=[a.json,b.json]", "data.runs=[r1.json,r2.json]", "data.limit=50",
            "data.reference=locomo10.json", "data.records_key=detailed_results"]))
    GlobalHydra.instance().clear()
    assert list(cfg.data.path) == ["a.json", "b.json"]
    assert list(cfg.data.runs) == ["r1.json", "r2.json"]
    assert (cfg.data.limit, cfg.data.seed, cfg.data.reference, cfg.data.records_key) == (
        50, 0, "locomo10.json", "detailed_results")
