"""Robust reading of results files: stored-verdict scales, gold lists, missing predictions,
questions without a gold, encodings, one read per file, and hostile inputs (issue 9)."""

from __future__ import annotations

import codecs
import hashlib
import json
import logging
import os
import sys
import threading
from pathlib import Path

import pytest
from conftest import EXAMPLE, run_job
from fake_anthropic import make_judge_config

from locomo_exp.config import (
    DataConfig,
    FieldMap,
    OnInvalid,
    OnMissingPrediction,
    ScorerName,
)
from locomo_exp.data import DataValidationError, input_file, load_results
from locomo_exp.results import QARecord
from locomo_exp.scoring import score_lexical
from locomo_exp.tracking import run_metrics


def _qa(**overrides: object) -> dict:
    record = {"question": "Q?", "ground_truth": "A", "predicted_answer": "A", "category": 4}
    record.update(overrides)
    return record


def _write(tmp_path: Path, obj: object, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return path


def _rows(result) -> list[dict]:
    return [json.loads(line) for line in (result.output_dir / "scores.jsonl").read_text().splitlines()]


VERDICT_FIELDS = FieldMap(ground_truth="ground_truth", prediction="predicted_answer",
                          question_id="question_id", judge_score="verdict")


def _verdict_file(tmp_path: Path, verdicts: list) -> Path:
    return _write(tmp_path, [_qa(question_id=f"q{i}", verdict=v) for i, v in enumerate(verdicts)])


# ---------------------------------------------------------------- 1. stored verdict scale


def test_stored_verdicts_on_a_0_1_scale_give_stored_j_55_56_end_to_end(tmp_path: Path) -> None:
    path = _verdict_file(tmp_path, [1.0, 0.6667, 0.0])
    data = DataConfig(path=str(path), format="fields", fields=VERDICT_FIELDS)
    loaded = load_results(path, data)
    assert [r.stored_judge_score for r in loaded.records] == pytest.approx([100.0, 66.67, 0.0])

    result = run_job(tmp_path, data)
    stored = result.summary["stored_judge"]["overall"]
    assert stored["count"] == 3
    assert round(stored["mean"], 2) == 55.56
    assert round(result.metrics["stored_judge/overall"], 2) == 55.56
    assert "| overall (1-4) | 3 | 55.56 |" in result.report_path.read_text()


def test_stored_verdicts_above_1_are_already_percent(tmp_path: Path) -> None:
    loaded = load_results(_verdict_file(tmp_path, [0.5, 85, 100]),
                          DataConfig(format="fields", fields=VERDICT_FIELDS))
    assert [r.stored_judge_score for r in loaded.records] == [0.5, 85.0, 100.0]


@pytest.mark.parametrize(
    ("verdicts", "message"),
    [
        pytest.param([1, -1, 0], "record [1]: field 'verdict': a stored judge verdict must be true/false, "
                     "CORRECT/WRONG or a number in 0-1 or 0-100, got -1", id="negative"),
        pytest.param([1, 0, 150], "record [2]: field 'verdict': a stored judge verdict must be true/false, "
                     "CORRECT/WRONG or a number in 0-1 or 0-100, got 150", id="above-100"),
        pytest.param([1, "yes", 0], "record [1]: field 'verdict': a stored judge verdict must be "
                     "true/false, CORRECT/WRONG or a number in 0-1 or 0-100, got 'yes'", id="text"),
        pytest.param([True, 0.5, False], "record [1]: field 'verdict': stored judge verdicts mix "
                     "true/false with scores such as 0.5 here", id="bools-mixed-with-scores"),
    ],
)
def test_verdicts_that_cannot_be_on_one_scale_name_file_field_and_record(
    tmp_path: Path, verdicts: list, message: str
) -> None:
    path = _verdict_file(tmp_path, verdicts)
    with pytest.raises(DataValidationError) as info:
        load_results(path, DataConfig(format="fields", fields=VERDICT_FIELDS))
    assert f"{path}: {message}" in str(info.value)


def test_bools_with_0_and_1_are_one_binary_scale(tmp_path: Path) -> None:
    loaded = load_results(_verdict_file(tmp_path, [True, 0, 1, False]),
                          DataConfig(format="fields", fields=VERDICT_FIELDS))
    assert [r.stored_judge_score for r in loaded.records] == [100.0, 0.0, 100.0, 0.0]


# ---------------------------------------------------------------- 2. gold lists


def test_a_gold_list_fills_references_and_n_references_in_scores(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        _qa(question_id="a", ground_truth=["the Final Harbor", "Port Vell"], predicted_answer="Port Vell"),
        _qa(question_id="b", ground_truth="Barcelona", predicted_answer="Barcelona"),
        _qa(question_id="c", ground_truth=[2019, " ", None, "in 2020"]),
    ])
    loaded = load_results(path)
    first, second, third = loaded.records
    assert first.references == ("the Final Harbor", "Port Vell")
    assert first.gold_references == ("the Final Harbor", "Port Vell")
    assert first.ground_truth == "the Final Harbor | Port Vell"
    assert (second.references, second.gold_references) == ((), ("Barcelona",))
    assert third.references == ("2019", "in 2020")  # numbers as text; blank and null elements dropped

    rows = _rows(run_job(tmp_path, DataConfig(path=str(path))))
    assert [row["n_references"] for row in rows] == [2, 1, 2]
    assert rows[0]["ground_truth"] == "the Final Harbor | Port Vell"


def test_an_empty_list_gold_is_an_empty_gold(tmp_path: Path) -> None:
    loaded = load_results(_write(tmp_path, [_qa(question_id="a", ground_truth=[]), _qa(question_id="b")]))
    assert [r.question_id for r in loaded.records] == ["b"]
    assert [str(p) for p in loaded.excluded_no_gold] == [
        f"{tmp_path / 'results.json'}: record [0]: field 'ground_truth': "
        "no gold answer (it is an empty list): question excluded"
    ]


def test_a_gold_list_of_objects_is_an_invalid_record(tmp_path: Path) -> None:
    with pytest.raises(DataValidationError, match=r"record \[0\]: field 'ground_truth': a list of gold "
                       r"answers may hold only text and numbers, got dict \{'a': 1\}"):
        load_results(_write(tmp_path, [_qa(ground_truth=[{"a": 1}])]))


# ---------------------------------------------------------------- 3. missing predictions

MISSING_PREDICTIONS = (
    '[{"question": "Q0", "ground_truth": "Paris", "predicted_answer": null, "category": 4},\n'
    ' {"question": "Q1", "ground_truth": "Paris", "predicted_answer": NaN, "category": 4},\n'
    ' {"question": "Q2", "ground_truth": "Paris", "predicted_answer": Infinity, "category": 1},\n'
    ' {"question": "Q3", "ground_truth": "Paris", "predicted_answer": -Infinity, "category": 5},\n'
    ' {"question": "Q4", "ground_truth": "Paris", "predicted_answer": "Paris", "category": 4},\n'
    ' {"question": "Q5", "ground_truth": "Paris", "predicted_answer": "", "category": 4}]'
)


def test_null_nan_and_infinite_predictions_are_missing_and_scored_zero(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path, MISSING_PREDICTIONS)
    with caplog.at_level(logging.WARNING, logger="locomo_exp.data"):
        loaded = load_results(path)
    assert [r.prediction_missing for r in loaded.records] == [True, True, True, True, False, False]
    assert [r.prediction for r in loaded.records] == ["", "", "", "", "Paris", ""]
    assert loaded.n_missing_predictions == 4
    assert [p.message for p in loaded.missing_predictions] == [
        "prediction is null", "prediction is NaN", "prediction is Infinity", "prediction is -Infinity"
    ]
    assert f"{path}: 4 predictions missing (null, NaN or Infinity), each scored 0, e.g. [0]" in caplog.text

    result = run_job(tmp_path, DataConfig(path=str(path)))
    rows = _rows(result)
    assert [row["f1"] for row in rows] == [0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    assert [row["prediction_missing"] for row in rows] == [True, True, True, True, False, False]
    assert result.summary["input"]["n_missing_predictions"] == 4
    assert result.summary["counts"]["overall"] == 6  # scored, not dropped
    assert result.metrics["data/n_missing_predictions"] == 4
    assert run_metrics(result.summary, {})["data/n_missing_predictions"] == 4
    report = result.report_path.read_text()
    assert "- Missing predictions (null, NaN or Infinity in the file), each scored 0: 4" in report


def test_on_missing_prediction_error_stops_before_any_judge_call(fake_anthropic, tmp_path: Path) -> None:
    path = _write(tmp_path, MISSING_PREDICTIONS)
    data = DataConfig(path=str(path), on_missing_prediction=OnMissingPrediction.error)
    with pytest.raises(DataValidationError) as info:
        run_job(tmp_path, data, scorer=ScorerName.judge, judge=make_judge_config(fake_anthropic, tmp_path))
    message = str(info.value)
    assert f"{path}: record [0]: field 'predicted_answer': prediction is null" in message
    assert f"{path}: record [3]: field 'predicted_answer': prediction is -Infinity" in message
    assert "4 predictions are missing (null, NaN or Infinity) and data.on_missing_prediction=error" in message
    assert "record [4]" not in message
    assert fake_anthropic.messages_requests() == []


# ---------------------------------------------------------------- 4. no gold


def test_null_empty_and_blank_golds_are_excluded_warned_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path, [
        _qa(question_id="null", ground_truth=None),
        _qa(question_id="empty", ground_truth=""),
        _qa(question_id="blank", ground_truth=" \t\n"),
        _qa(question_id="ok", ground_truth="A"),
        _qa(question_id="cat5-null", ground_truth=None, category=5, predicted_answer="None"),
        _qa(question_id="cat5-adv", ground_truth=None, category=5, adversarial_answer="X",
            predicted_answer="Not mentioned"),
    ])
    with caplog.at_level(logging.WARNING, logger="locomo_exp.data"):
        loaded = load_results(path)
    assert [r.question_id for r in loaded.records] == ["ok", "cat5-adv"]
    assert loaded.records[1].ground_truth == "X"  # like a LoCoMo cat-5 item without `answer`
    assert [p.message for p in loaded.excluded_no_gold] == [
        "no gold answer (it is null): question excluded",
        "no gold answer (it is empty): question excluded",
        "no gold answer (it is blank (only whitespace)): question excluded",
        "no gold answer (it is null): question excluded",
    ]
    assert f"{path}: excluded 4 questions with no gold answer (null, empty or blank), e.g. [0]" in caplog.text

    result = run_job(tmp_path, DataConfig(path=str(path)))
    assert result.summary["input"]["n_excluded_no_gold"] == 4
    assert result.summary["counts"]["overall"] == 2
    assert result.metrics["data/n_excluded_no_gold"] == 4
    assert [row["question_id"] for row in _rows(result)] == ["ok", "cat5-adv"]
    report = result.report_path.read_text()
    assert "- Excluded for having no gold answer (null, empty or blank): 4" in report


def test_a_file_where_no_question_has_a_gold_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataValidationError, match="No question has a gold answer"):
        load_results(_write(tmp_path, [_qa(ground_truth=None), _qa(ground_truth="")]))


def test_a_null_gold_is_never_the_text_none() -> None:
    record = QARecord("q", "Q?", None, "None", 4)
    assert record.gold_text == ""
    assert record.gold_references == ("",)
    scores = score_lexical([record], "locomo", True)[0]
    assert (scores["f1"], scores["f1_squad"], scores["f1_mem0"], scores["bleu1"]) == (0.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------- 5. encodings

RECORDS = [_qa(question="Où est né Zoë?", ground_truth="Montréal", predicted_answer="Montréal")]


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        pytest.param(codecs.BOM_UTF8, "utf-8", id="utf-8-bom"),
        pytest.param(codecs.BOM_UTF16_LE, "utf-16-le", id="utf-16-le-bom"),
        pytest.param(codecs.BOM_UTF16_BE, "utf-16-be", id="utf-16-be-bom"),
        pytest.param(codecs.BOM_UTF32_LE, "utf-32-le", id="utf-32-le-bom"),
        pytest.param(b"", "utf-16-le", id="utf-16-le-no-bom"),
    ],
)
def test_files_with_a_byte_order_mark_are_decoded_by_it(tmp_path: Path, bom: bytes, codec: str) -> None:
    data = bom + json.dumps(RECORDS, ensure_ascii=False).encode(codec)
    path = tmp_path / "encoded.json"
    path.write_bytes(data)
    loaded = load_results(path)
    assert (loaded.records[0].question, loaded.records[0].ground_truth) == ("Où est né Zoë?", "Montréal")
    assert loaded.sha256 == hashlib.sha256(data).hexdigest()


def test_undecodable_bytes_are_one_line_naming_the_file_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('[{"question": "Où?"}]'.encode("latin-1"))
    with pytest.raises(DataValidationError) as info:
        load_results(path)
    assert str(info.value) == (  # the whole message: one line
        f"{path}: not valid UTF-8 text: cannot decode the byte at offset 16 (0xf9: invalid start "
        "byte); save the file as UTF-8"
    )


def test_undecodable_utf16_offset_counts_the_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_bytes(codecs.BOM_UTF16_LE + "[1]".encode("utf-16-le") + b"\x00")  # a dangling byte
    with pytest.raises(DataValidationError, match=r"not valid UTF-16 LE text: cannot decode the byte at "
                       r"offset 8 \(0x00: truncated data\)"):
        load_results(path)


# ---------------------------------------------------------------- 6. one read, one hash


def test_the_hash_is_of_the_bytes_parsed_and_the_file_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, [_qa(question_id="original")])
    original = path.read_bytes()
    real_open = os.open
    opened: list[str] = []

    def open_then_swap(name, flags, *args):  # the path now holds other bytes
        fd = real_open(name, flags, *args)
        opened.append(str(name))
        swapped = tmp_path / "swap.json"
        swapped.write_text(json.dumps([_qa(question_id="swapped")]))
        os.replace(swapped, path)
        return fd

    monkeypatch.setattr(input_file.os, "open", open_then_swap)
    loaded = load_results(path)
    assert opened == [str(path)]
    assert [r.question_id for r in loaded.records] == ["original"]
    assert loaded.sha256 == hashlib.sha256(original).hexdigest()
    assert loaded.sha256 != hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- 7. hostile inputs


def test_json_nested_too_deep_is_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataValidationError) as info:
        load_results(path)
    assert str(info.value) == (  # the whole message: one line
        f"{path}: JSON nested too deep to read (thousands of nested lists or objects)"
    )


@pytest.mark.skipif(not hasattr(sys, "get_int_max_str_digits"), reason="Python < 3.11 has no int-str limit")
def test_an_integer_with_thousands_of_digits_is_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, '[{"question": "Q", "ground_truth": ' + "9" * 5000 + "}]")
    with pytest.raises(DataValidationError) as info:
        load_results(path)
    assert str(info.value) == (  # the whole message: one line
        f"{path}: contains an integer with more digits than Python reads (the limit is 4300 "
        "digits); no results-file value is that long"
    )


def test_a_question_of_spaces_only_is_an_empty_question(tmp_path: Path) -> None:
    path = _write(tmp_path, [_qa(question="   "), _qa(question=None), {"ground_truth": "A",
                  "predicted_answer": "A", "category": 4}, _qa(question=3)])
    with pytest.raises(DataValidationError) as info:
        load_results(path)
    assert [(p.where, p.message) for p in info.value.problems] == [
        ("[0]", "question is empty"),
        ("[1]", "question is empty"),
        ("[2]", "missing question"),
        ("[3]", "question must be text, got int"),
    ]


def test_a_deeply_nested_latency_value_is_shown_short(tmp_path: Path) -> None:
    nested: object = 1
    for _ in range(500):
        nested = [nested]
    path = _write(tmp_path, [_qa(total_latency_s=nested)])
    with pytest.raises(DataValidationError, match=r"field 'total_latency_s': expected a finite number, "
                       r"got \[\[\[\[\.\.\.\]\]\]\]"):
        load_results(path)


def test_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    with pytest.raises(DataValidationError, match=r"a\.json: symlink loop \(too many levels of symbolic links\)"):
        load_results(tmp_path / "a.json")
    with pytest.raises(DataValidationError, match="symlink loop"):  # relative, through the runner
        run_job(tmp_path, DataConfig(path="a.json"))


def test_a_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataValidationError, match=f"{tmp_path}: is a directory, not a results file"):
        load_results(tmp_path)
    from locomo_exp.data import Reference

    with pytest.raises(DataValidationError, match=f"{tmp_path}: is a directory, not a reference file"):
        Reference(tmp_path)  # LoCoMo's data.reference
    with pytest.raises(DataValidationError, match=f"{tmp_path}: is a directory, not an errata file"):
        run_job(tmp_path, DataConfig(path=str(EXAMPLE), errata=str(tmp_path)))


def test_a_fifo_is_refused_without_opening_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(input_file.os, "open", lambda name, *a: opened.append(str(name)) or real_open(name, *a))
    errors: list[BaseException] = []

    def load() -> None:
        try:
            load_results(fifo)
        except BaseException as error:  # noqa: BLE001 - handed to the test thread
            errors.append(error)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(timeout=30)  # a guard against a hang, not a timing assertion
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert opened == []
    [error] = errors
    assert isinstance(error, DataValidationError)
    assert f"{fifo}: is a FIFO (named pipe), not a regular file" in str(error)


def test_on_invalid_skip_does_not_count_excluded_or_skipped_as_missing(tmp_path: Path) -> None:
    path = _write(tmp_path, [_qa(predicted_answer=None, category="weird"), _qa(ground_truth=None,
                  predicted_answer=None), _qa(predicted_answer=None)])
    loaded = load_results(path, DataConfig(on_invalid=OnInvalid.skip))
    assert (loaded.n_skipped_records, loaded.n_excluded_no_gold, loaded.n_missing_predictions) == (1, 1, 1)
    assert [r.position for r in loaded.records] == [2]
