"""Judged BEAM runs against the fake Anthropic and OpenAI servers: one call per rubric item.

Invented answers (no BEAM excerpt); the fake judge gives each item the verdict its text asks
for, so every figure is worked out by hand below.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from beam_helpers import mem0_file, mem0_row
from fake_anthropic import Reply, rubric, text

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.llm.stop import CallsStop, CallsStopped

# item k of a question is "the answer names invented fact k"; the fake gives fact 0 a 1,
# fact 1 a 0.5 and fact 2 a 0 -> a 3-item question scores (1 + 0.5 + 0) / 3 = 0.5 in beam-nugget
VERDICT = {0: 1, 1: 0.5, 2: 0}
ITEM_RE = re.compile(r"<rubric_item>\ninvented fact (\d+) is named\n</rubric_item>")


def _rows(n_chats: int = 2, per_chat: int = 3) -> list[dict]:
    rows = []
    for chat in range(n_chats):
        for position in range(per_chat):
            ability = ("abstention", "summarization", "knowledge_update")[position % 3]
            row = mem0_row(chat, position, ability, [None, None, None][: 1 + position % 3],
                           answer=f"Invented answer of chat {chat}.")
            result = row["cutoff_results"]["top_10"]
            row["rubric"] = [f"invented fact {k} is named" for k in range(len(row["rubric"]))]
            result["nugget_scores"] = []  # no stored verdicts: the judge gives them
            rows.append(row)
    return rows


def _answers(tmp_path: Path, **kwargs) -> Path:
    return mem0_file(tmp_path / "answers.json", _rows(**kwargs))


def item_verdict(prompt: str) -> float:
    match = ITEM_RE.search(prompt)
    assert match, prompt
    return VERDICT[int(match.group(1))]


def _respond(request) -> Reply:
    return text(json.dumps({"score": item_verdict(request.prompt), "reason": "invented"}))


def _cfg(typed_config, tmp_path: Path, server, *extra: str):
    return typed_config(
        "data=file", "tracking=none", "benchmark=beam", "scorer=judge",
        f"data.path={tmp_path / 'answers.json'}", f"judge.base_url={getattr(server, 'base_url', server.url)}",
        "judge.progress=false", "judge.audit.n=0",
        f"judge.cache_path={tmp_path / 'cache.sqlite'}", *extra,
    )


def _expected_nugget(rows: list[dict]) -> list[float]:
    return [round(sum(VERDICT[k] for k in range(len(r["rubric"]))) / len(r["rubric"]), 4)
            for r in rows]


def test_one_request_per_rubric_item_and_nugget_rules_on_the_verdicts(
    typed_config, tmp_path, fake_anthropic
):
    fake_anthropic.responder = _respond
    _answers(tmp_path)
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic), tmp_path / "out", tmp_path)
    requests = fake_anthropic.messages_requests()
    n_items = sum(len(r["rubric"]) for r in _rows())
    assert n_items == 12 and len(requests) == n_items  # one call per item, not per question
    # beam-nugget shows the question to the judge
    assert all("<question>" in r.prompt for r in requests)
    rows = [json.loads(line) for line in (tmp_path / "out" / "scores.jsonl").open()]
    assert [r[p.NUGGET]["score"] for r in rows] == _expected_nugget(_rows())
    assert [r["item_scores"] for r in rows][:3] == [[1.0], [1.0, 0.5], [1.0, 0.5, 0.0]]
    summary = result.summary
    assert summary["verdicts"]["source"] == "judge"
    assert summary["judge"]["profile"] == p.NUGGET and summary["judge"]["judged_unit"] == "rubric item"
    assert summary["judge"]["counts"]["calls_made"] == 12
    overall = summary["figures"][p.NUGGET]["overall"]
    # question scores 1, 0.75, 0.5 in each chat: all pass, average 0.75
    assert (overall["passes"], overall["n"]) == (6, 6)
    assert overall["avg_score"] == pytest.approx(0.75)
    # beam-official re-aggregates the same verdicts (0.5 -> 0): 1, 0.5, 1/3
    official = summary["figures"][p.OFFICIAL]["abilities"]
    assert official["summarization"]["score"] == pytest.approx(0.5)
    assert official["knowledge_update"]["score"] == pytest.approx(1 / 3)
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["headline_profile"] == p.NUGGET and card["judge"]["profile"] == p.NUGGET
    assert "judged under the beam-nugget prompt" in (tmp_path / "out" / "report.md").read_text()


def test_a_rerun_pays_nothing(typed_config, tmp_path, fake_anthropic):
    fake_anthropic.responder = _respond
    _answers(tmp_path)
    first = run_beam(_cfg(typed_config, tmp_path, fake_anthropic), tmp_path / "a", tmp_path)
    assert len(fake_anthropic.messages_requests()) == 12
    second = run_beam(_cfg(typed_config, tmp_path, fake_anthropic), tmp_path / "b", tmp_path)
    assert len(fake_anthropic.messages_requests()) == 12  # nothing new
    assert second.summary["judge"]["counts"]["calls_made"] == 0
    assert second.summary["judge"]["counts"]["cache_hits"] == 12
    assert second.summary["figures"] == first.summary["figures"]


def test_a_stopped_run_resumes_and_pays_no_item_twice(typed_config, tmp_path, fake_anthropic):
    stop = CallsStop()

    def respond(request) -> Reply:
        if len(fake_anthropic.messages_requests()) >= 5:
            stop.set("stopped for the test")
        return _respond(request)

    fake_anthropic.responder = respond
    _answers(tmp_path)
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.max_concurrency=1")
    with pytest.raises(CallsStopped):
        run_beam(cfg, tmp_path / "a", tmp_path, calls_stop=stop)
    paid = len(fake_anthropic.messages_requests())
    assert 5 <= paid < 12
    fake_anthropic.responder = _respond
    result = run_beam(cfg, tmp_path / "b", tmp_path)
    prompts = [r.prompt for r in fake_anthropic.messages_requests()]
    assert len(prompts) == 12 and len(set(prompts)) == 12  # each item paid exactly once
    assert result.summary["judge"]["counts"]["cache_hits"] == paid


def test_batch_mode_equals_realtime(typed_config, tmp_path, fake_anthropic):
    fake_anthropic.responder = _respond
    _answers(tmp_path)
    realtime = run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.cache_path="
                             f"{tmp_path / 'rt.sqlite'}"), tmp_path / "rt", tmp_path)
    batch = run_beam(
        _cfg(typed_config, tmp_path, fake_anthropic, f"judge.cache_path={tmp_path / 'b.sqlite'}",
             "judge.mode=batch", "judge.batch.poll_interval_s=0.01"),
        tmp_path / "batch", tmp_path,
    )
    # one realtime canary call, the other items in the batch: 12 requests, one per item
    realtime_calls = len(fake_anthropic.messages_requests()) - 12
    assert fake_anthropic.batch_requests_submitted() + realtime_calls == 12
    assert fake_anthropic.batch_requests_submitted() >= 11
    assert batch.summary["judge"]["counts"]["calls_made"] == 12
    assert batch.summary["judge"]["mode"] == "batch"
    assert batch.summary["figures"] == realtime.summary["figures"]
    rows = [(tmp_path / d / "scores.jsonl").read_text() for d in ("rt", "batch")]
    assert rows[0] == rows[1]


def test_dry_run_counts_items_and_prices_them(typed_config, tmp_path, fake_anthropic):
    _answers(tmp_path)
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.dry_run=true"),
                      tmp_path / "out", tmp_path)
    assert fake_anthropic.messages_requests() == []
    estimate = result.summary["judge"]["dry_run_estimate"]
    assert (estimate["calls_total"], estimate["rubric_items"], estimate["alignment_calls"]) == (
        12, 12, 0)
    assert estimate["estimated_cost_usd"] > 0
    assert result.summary["figures"] == {}
    assert "DRY RUN, 12 calls would be made (12 rubric items" in "\n".join(result.console)


def test_a_job_builds_its_item_records_once(typed_config, tmp_path, fake_anthropic):
    from locomo_exp.benchmarks.beam import judged

    fake_anthropic.responder = _respond
    _answers(tmp_path)
    judged._item_records.cache_clear()
    run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.dry_run=true"),
             tmp_path / "dry", tmp_path)
    info = judged._item_records.cache_info()
    assert (info.misses, info.hits) == (1, 2)  # preflight builds; judging and trust reuse
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic), tmp_path / "out", tmp_path)
    assert len(fake_anthropic.messages_requests()) == 12
    info = judged._item_records.cache_info()
    assert (info.misses, info.hits) == (1, 5)  # the same answers read again: equal questions
    assert result.summary["figures"] != {}


def test_openai_provider_counts_items_too(typed_config, tmp_path, fake_openai):
    fake_openai.responder = _respond
    _answers(tmp_path)
    result = run_beam(
        _cfg(typed_config, tmp_path, fake_openai, "judge=gpt-4.1-mini", "judge.temperature=0"),
        tmp_path / "out", tmp_path,
    )
    assert len(fake_openai.messages_requests()) == 12
    assert result.summary["figures"][p.NUGGET]["overall"]["avg_score"] == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param(("scorer=f1", "beam.profile=official"), "beam.profile=official: read by judged",
                     id="profile-without-judge"),
        pytest.param(("beam.strict=true",), "add beam.profile=official", id="strict-with-nugget"),
        pytest.param(("judge.protocol=binary",), "judged item by item", id="locomo-protocol"),
    ],
)
def test_bad_beam_settings_are_one_line_before_any_call(
    typed_config, tmp_path, fake_anthropic, overrides, message
):
    _answers(tmp_path)
    with pytest.raises(ValueError, match=re.escape(message)):
        run_beam(_cfg(typed_config, tmp_path, fake_anthropic, *overrides), tmp_path / "o", tmp_path)
    assert fake_anthropic.messages_requests() == []
    assert not (tmp_path / "o").exists()


def test_a_half_verdict_reply_in_rubric_scale_is_unscored_not_clamped(
    typed_config, tmp_path, fake_anthropic
):
    # a LoCoMo-style 0-100 score is out of the item scale: unscored, and the question failed
    fake_anthropic.responder = lambda request: rubric(80)
    _answers(tmp_path, n_chats=1, per_chat=1)
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic), tmp_path / "o", tmp_path)
    assert result.summary["judge"]["counts"]["parse_failure"] == 1
    assert result.summary["figures"][p.NUGGET]["overall"]["judge_failed"] == 1


def test_each_item_prompt_is_built_once_per_job_and_sent_as_built(
    typed_config, tmp_path, fake_anthropic, monkeypatch
):
    # the pipeline's preflight builds the prompts for its size checks; the judge step
    # reuses them (judge/prompt_book.py) instead of building each a second time
    from locomo_exp.benchmarks.beam.judge_prompts import NUGGET_ITEM
    from locomo_exp.benchmarks.beam.judged import item_records
    from locomo_exp.benchmarks.beam.load import read_beam
    from locomo_exp.judge.protocols.kinds import KindProtocol

    original = KindProtocol.build_record_prompt
    built: list[str] = []

    def counting(self, record):
        built.append(record.question_id)
        return original(self, record)

    monkeypatch.setattr(KindProtocol, "build_record_prompt", counting)
    fake_anthropic.responder = _respond
    _answers(tmp_path)
    run_beam(_cfg(typed_config, tmp_path, fake_anthropic), tmp_path / "out", tmp_path)
    requests = fake_anthropic.messages_requests()
    assert len(requests) == 12
    assert len(built) == 12 and len(set(built)) == 12  # 24 before: preflight + run_judge
    records = item_records(read_beam(tmp_path / "answers.json"), template=False)
    expected = sorted(original(NUGGET_ITEM, record) for record in records)
    assert sorted(r.prompt for r in requests) == expected  # byte for byte
