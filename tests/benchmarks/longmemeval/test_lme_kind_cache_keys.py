"""LongMemEval's kinds reach the judge as strings, and the cache keys stay those of before.

Before issue 26 §1 the LongMemEval job re-coded each kind as a fake LoCoMo category (1-7) and
the judge cache key holds the record's category. The digests below were computed by that code
(commit b9434f1, ``judge_records`` + ``build_call_specs``), so a job judged before the change is
answered from its cache after it: a re-run pays nothing.
"""

from __future__ import annotations

from dataclasses import replace

from conftest import CONF_DIR

from locomo_exp.benchmarks.longmemeval import JUDGE_PROTOCOLS
from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.benchmarks.longmemeval.answers import LmeAnswer, LmeItem, LmeMatched
from locomo_exp.benchmarks.longmemeval.job import judge_records, lme_judge_config
from locomo_exp.benchmarks.longmemeval.protocol import LONGMEMEVAL
from locomo_exp.benchmarks.longmemeval.reference import LmeQuestion
from locomo_exp.judge.calls import build_call_specs
from locomo_exp.judge.protocols import plugged_protocols

TYPES = (
    "single-session-user", "single-session-assistant", "single-session-preference",
    "multi-session", "temporal-reasoning", "knowledge-update",
)  # fmt: skip


def _matched() -> LmeMatched:
    items = [
        LmeItem(LmeQuestion(f"q{i}", kind, f"Question {i}?", f"gold {i}", "2023/05/30", i),
                LmeAnswer(f"q{i}", f"answer {i}"))
        for i, kind in enumerate(TYPES)
    ]  # fmt: skip
    items.append(LmeItem(LmeQuestion("q9_abs", "multi-session", "Q abs?", "never said", "d", 6),
                         LmeAnswer("q9_abs", "Paris")))  # fmt: skip
    return LmeMatched(items, [], [])


def _digests(typed_config, *overrides: str) -> list[tuple[str, str]]:
    cfg = typed_config("data=file", "data.path=x.jsonl", "benchmark=longmemeval", *overrides)
    with plugged_protocols(JUDGE_PROTOCOLS):
        judge = lme_judge_config(cfg.judge)
        specs = build_call_specs(judge_records(_matched()), judge, api_version="2023-06-01")
    return [(s.question_id, s.digest) for s in specs]


OLD_DIGESTS = {
    "q0": "d5c7cfb8cc77fe536fadfcf0be017b9e7c954703c1e43c0add98caa5631d2b25",
    "q1": "0867ef81bb676faf73011bb1cebce79a9816fe0b13726989d1f9f120bbf1bcf4",
    "q2": "d536503f6dce12344683c11210c6f868fc56625de0caf4ca4bb1693325d443e6",
    "q3": "cf4aecdd9fe6ad201b253da7a94024b0976d5f0b6c75f27039cfb72df896027b",
    "q4": "2a5dbd3a5382fc9f064f9b80d33f7fb2b9668a6539cbb7132838b3b54c46644c",
    "q5": "540c59ee8868d1e2286987aeb80a5af7dfc0e315fe6460de29775da5e33eec24",
    "q9_abs": "3ae39c7e7ded1bc2126b4925eb853d03c01b9580cc3e6b658e7e567276f3b459",
}
"""``judge.protocol=longmemeval`` (benchmark=longmemeval), one run per question, by b9434f1."""

OLD_TEMPLATE_DIGESTS = {
    "q0": "e78bea4cbe84c877f83fe1854484c1500f94e116b2572b6541a8e815cadc01e3",
    "q1": "4e8c634b2ed6817a9d58e735b5cce54cbd4b835ed1dc4af391fd616ca508ea6b",
    "q2": "ec9dcf300bd1642976428917d817731ac3e956791c52da6beb0689ec1d7a19be",
    "q3": "a8d8c94cc65e64e5fab04101c907437aaa453149364f350fdf17d5ccdb42ea31",
    "q4": "ac29f5f93836ff4a0804e7d565fcfb3258b54264ccf0313a281f279f6c76c02d",
    "q5": "3410b39e0e89a32e4a7d352cfafa723c9351e2a8d07ab6f7ad121c918875d663",
    "q9_abs": "7116c8b22b983bfa5889b9ed11a508435ffe05ea508de7e4b4adbf52bbf2398f",
}
"""The same with ``judge.protocol=template`` and the shipped by-kind example template."""


def test_records_carry_the_kind_strings_and_no_lme_table_of_codes():
    records = judge_records(_matched())
    assert [(r.kind, r.question_type) for r in records] == [
        *((t, t) for t in TYPES), ("abstention", "multi-session")
    ]
    assert not {"KIND_CODES", "TYPE_CODES", "KIND_OF_CODE"} & set(vars(lme))
    assert LONGMEMEVAL.kinds == lme.JUDGE_KINDS  # the order fixes the engine ids (cache keys)


def test_cache_keys_of_the_longmemeval_protocol_are_those_written_before(typed_config):
    assert dict(_digests(typed_config)) == OLD_DIGESTS


def test_cache_keys_of_a_by_kind_template_are_those_written_before(typed_config):
    template = CONF_DIR / "templates" / "yes-no-by-kind-own-words.yaml"
    digests = _digests(typed_config, "judge.protocol=template", f"judge.template={template}")
    assert dict(digests) == OLD_TEMPLATE_DIGESTS


def test_the_prompt_is_chosen_by_the_kind_string_not_the_category(typed_config):
    record = judge_records(_matched())[-1]  # an abstention question of type multi-session
    assert LONGMEMEVAL.build_record_prompt(replace(record, category=99)).startswith(
        "Kind of question: abstention\n"
    )
    stray = replace(record, kind="bogus", question_type="bogus")
    assert LONGMEMEVAL.record_problems([record, stray]) == [
        "protocol longmemeval: record q9_abs has kind 'bogus', not one of "
        f"{', '.join(lme.JUDGE_KINDS)} (1 record(s))"
    ]
