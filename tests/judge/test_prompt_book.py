"""The job's prompt book: each judge prompt built once, reused only for its protocol and record."""

from __future__ import annotations

from dataclasses import replace

from locomo_exp.judge.prompt_book import PromptBook
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.results import QARecord

RECORD = QARecord(question_id="q1", question="Where did Ann move?", ground_truth="Lisbon",
                  prediction="She moved to Lisbon.", category=4)


def test_a_prompt_is_built_once_and_the_same_text_is_returned_after():
    book = PromptBook()
    rubric = get_protocol("rubric")
    first = book.prompt(rubric, RECORD)
    again = book.prompt(rubric, replace(RECORD))  # an equal record built anew: same entry
    assert first == rubric.build_record_prompt(RECORD)
    assert again is first and book.built == 1


def test_another_protocol_or_any_other_field_of_the_record_builds_its_own_prompt():
    book = PromptBook()
    rubric, binary = get_protocol("rubric"), get_protocol("binary")
    book.prompt(rubric, RECORD)
    other = replace(RECORD, prediction="She moved to Porto.")  # same question id
    assert book.prompt(binary, RECORD) == binary.build_record_prompt(RECORD)
    assert book.prompt(rubric, other) == rubric.build_record_prompt(other)
    assert "Porto" in book.prompt(rubric, other)
    assert book.built == 3
