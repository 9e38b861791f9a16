"""Other files of mem0's BEAM layout (any tier, any cutoff key) read with no options; bad records
are one line naming the file, the record and the field, before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from beam_helpers import config, mem0_file, mem0_row
from conftest import EXAMPLE, run_cli

from locomo_exp.benchmarks import plugin_for
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.config import ScorerConfig, ScorerName
from locomo_exp.data.input_file import DataValidationError

ABILITIES = ("abstention", "event_ordering", "summarization")


def five_chats(**kwargs: object) -> list[dict[str, object]]:
    return [mem0_row(chat, k, ability, [1.0, 0.5], **kwargs)  # type: ignore[arg-type]
            for chat in range(5) for k, ability in enumerate(ABILITIES)]


def test_another_tier_and_cutoff_key_read_with_no_options(tmp_path: Path) -> None:
    path = mem0_file(tmp_path / "run.json", five_chats(tier="1M", cutoffs=("top_10",)))
    assert plugin_for(config(path), tmp_path) is not None
    result = run_beam(config(path), tmp_path / "out", tmp_path)
    overall = result.summary["figures"]["beam-nugget"]["overall"]
    assert (overall["n"], overall["passes"], overall["avg_score"]) == (15, 15, 0.75)
    assert result.summary["input"]["setting"] == "top_10"
    assert result.summary["input"]["chats"] == 5
    assert result.summary["verdicts"]["judge_model"] == "invented-judge"
    official = result.summary["figures"]["beam-official"]["abilities"]
    assert official["abstention"]["score"] == 0.5  # the 0.5 item counts 0
    assert result.summary["baselines"][0]["not_comparable"]["beam-nugget"] == (
        "judge invented-judge vs gpt-5")


def test_several_cutoffs_score_the_first_and_say_so_and_data_setting_picks_another(
    tmp_path: Path,
) -> None:
    rows = five_chats(cutoffs=("top_10", "top_50"))
    for row in rows:  # top_50 answers satisfy every item
        for nugget in row["cutoff_results"]["top_50"]["nugget_scores"]:  # type: ignore[index]
            nugget["score"] = 1.0
    path = mem0_file(tmp_path / "run.json", rows, cutoffs=("top_10", "top_50"))
    first = run_beam(config(path), tmp_path / "a", tmp_path)
    assert first.summary["input"]["setting"] == "top_10"
    assert any("also holds top_50" in w for w in first.summary["warnings"])
    chosen = run_beam(config(path, setting="cutoff_results.top_50"), tmp_path / "b", tmp_path)
    assert chosen.summary["figures"]["beam-nugget"]["overall"]["avg_score"] == 1.0


def test_a_failed_judging_scores_zero_in_nugget_and_is_unscored_officially(tmp_path: Path) -> None:
    rows = five_chats()
    rows[0]["cutoff_results"]["top_10"]["nugget_scores"] = []  # type: ignore[index]
    path = mem0_file(tmp_path / "run.json", rows)
    result = run_beam(config(path), tmp_path / "out", tmp_path)
    scores = [json.loads(x) for x in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    assert scores[0]["beam-nugget"] == {"score": 0.0, "pass": False}
    assert scores[0]["beam-official"]["score"] is None
    assert result.summary["figures"]["beam-nugget"]["overall"]["judge_failed"] == 1


@pytest.mark.parametrize(("field", "value", "expected"), [
    pytest.param("question_type", "memory_magic", "field 'question_type'", id="unknown-ability"),
    pytest.param("score", "high", "field 'cutoff_results.top_10.nugget_scores[1].score'",
                 id="item-score-not-a-number"),
    pytest.param("rubric", [], "field 'rubric'", id="empty-rubric"),
])
def test_a_bad_record_is_one_line_naming_file_record_and_field(
    tmp_path: Path, field: str, value: object, expected: str
) -> None:
    rows = five_chats()
    if field == "score":
        rows[3]["cutoff_results"]["top_10"]["nugget_scores"][1]["score"] = value  # type: ignore[index]
    else:
        rows[3][field] = value
    path = mem0_file(tmp_path / "run.json", rows)
    with pytest.raises(DataValidationError) as caught:
        run_beam(config(path), tmp_path / "out", tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: record [3]: {expected}")
    assert not list((tmp_path / "out").iterdir())  # nothing written


def test_an_unknown_cutoff_names_the_ones_the_file_has(tmp_path: Path) -> None:
    path = mem0_file(tmp_path / "run.json", five_chats())
    with pytest.raises(DataValidationError, match="data.setting=top_5: no such cutoff; the file "
                                                  "has top_10"):
        run_beam(config(path, setting="top_5"), tmp_path / "out", tmp_path)


def test_locomo_only_settings_are_refused_and_a_judge_without_key_stops_before_writing(
    tmp_path: Path,
) -> None:
    path = mem0_file(tmp_path / "run.json", five_chats())
    with pytest.raises(ValueError, match="data.limit=5: not available for BEAM"):
        run_beam(config(path, limit=5), tmp_path / "out", tmp_path)
    judged = config(path)
    judged.scorer = ScorerConfig(name=ScorerName.judge)
    from locomo_exp.judge import JudgeError

    with pytest.raises(JudgeError, match="ANTHROPIC_API_KEY"):  # judged runs exist now
        run_beam(judged, tmp_path / "out", tmp_path)
    assert not (tmp_path / "out").exists()


def test_a_reference_given_for_mem0_rows_is_refused_not_ignored(tmp_path: Path) -> None:
    path = mem0_file(tmp_path / "run.json", five_chats())
    with pytest.raises(ValueError, match="not read for .*mem0's layout"):
        run_beam(config(path, reference=str(path)), tmp_path / "out", tmp_path)
    assert not list((tmp_path / "out").iterdir())


def test_a_locomo_file_is_not_claimed(tmp_path: Path) -> None:
    assert plugin_for(config(EXAMPLE), tmp_path).name == "locomo"  # the default


@pytest.mark.slow
def test_the_command_line_prints_a_bad_record_as_one_error_line(tmp_path: Path) -> None:
    rows = five_chats()
    rows[2]["question_type"] = "memory_magic"
    path = mem0_file(tmp_path / "run.json", rows)
    done = run_cli("data=file", f"data.path={path}", "tracking=none", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: {path}: record [2]: field 'question_type': 'memory_magic' is not one of "
        "BEAM's ten abilities. Fix the file: a BEAM run scores every question."]
    assert "Traceback" not in done.stderr
