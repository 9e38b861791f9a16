"""Reading LongMemEval dataset files streaming: fields, variant, hash, one-line errors."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest
from lme_helpers import REFERENCE, dataset_item, need_shared, write_json

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.benchmarks.longmemeval.reference import read_lme_reference
from locomo_exp.data.input_file import DataValidationError


def test_shared_reference_has_the_benchmarks_500_questions():
    need_shared()
    ref = read_lme_reference(REFERENCE)
    assert len(ref.questions) == 500
    assert Counter(q.question_type for q in ref.questions.values()) == lme.QUESTION_TYPES
    assert sum(q.abstention for q in ref.questions.values()) == 30
    assert sum(isinstance(q.answer, int) for q in ref.questions.values()) == 26
    assert next(iter(ref.questions)) == "gpt4_2655b836"
    assert ref.sha256.startswith("6250abfa2660ab81")
    assert ref.size_bytes == 200_865
    assert ref.variant == "questions only"


@pytest.mark.parametrize(
    ("sessions", "variant"),
    [
        pytest.param(0, "questions only", id="empty-haystacks"),
        pytest.param(2, "oracle", id="oracle"),
        pytest.param(48, "s", id="s"),
    ],
)
def test_variant_is_named_from_haystack_sessions_per_question(tmp_path, sessions, variant):
    items = [dataset_item(f"q{i}", "multi-session", sessions=sessions) for i in range(3)]
    path = write_json(tmp_path / "data.json", items)
    ref = read_lme_reference(path)
    assert ref.variant == variant
    assert ref.sessions == 3 * sessions
    assert ref.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_only_question_fields_are_kept_and_int_answers_stay_int(tmp_path):
    items = [dataset_item("a", "temporal-reasoning", answer=3, sessions=4)]
    ref = read_lme_reference(write_json(tmp_path / "d.json", items))
    q = ref.questions["a"]
    assert (q.question_type, q.answer, q.gold_text, q.question_date) == (
        "temporal-reasoning", 3, "3", "2023/05/30 (Tue) 23:40"
    )
    assert not hasattr(q, "haystack_sessions")


def _error(tmp_path, obj_or_text):
    path = tmp_path / "ref.json"
    path.write_text(obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text))
    with pytest.raises(DataValidationError) as info:
        read_lme_reference(path)
    assert len(info.value.problems) == 1  # one line, naming the file
    message = str(info.value.problems[0])
    assert message.startswith(str(path))
    return message


def test_a_directory_as_reference_is_called_not_a_reference_file(tmp_path):
    # trial 5, finding 16: it said "not a results file"
    with pytest.raises(DataValidationError) as info:
        read_lme_reference(tmp_path)
    assert str(info.value.problems[0]) == f"{tmp_path}: is a directory, not a reference file"


def test_locomo_dataset_as_reference_is_one_line(tmp_path):
    message = _error(tmp_path, [{"sample_id": "conv-26", "qa": [], "conversation": {}}])
    assert "LoCoMo's dataset" in message and "record [0]" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param({"question_id": "a"}, "not a LongMemEval dataset file", id="object"),
        pytest.param("[{\"question_id\": ", "not valid JSON", id="truncated"),
        pytest.param([{"x": 1}], "not a LongMemEval dataset file", id="other-keys"),
        pytest.param([1, 2], "not an object", id="scalars"),
        pytest.param(
            [dataset_item("a", "single-session-user"), dataset_item("a", "multi-session")],
            "duplicate id 'a'",
            id="duplicate",
        ),
        pytest.param([dataset_item("a", "open-domain")], "'question_type'", id="unknown-type"),
        pytest.param([dataset_item("a", "multi-session", answer=None)], "'answer'", id="null-gold"),
    ],
)
def test_bad_reference_is_one_line(tmp_path, content, expected):
    assert expected in _error(tmp_path, content)
