"""Judged runs under beam-official: the question hidden, 0.5 -> 0, event ordering by tau-b.

Invented rows (no BEAM excerpt); expected figures worked by hand from the authors' rules
(BEAM @ b2a3ee8, compute_metrics.py / report_results.py; docs/beam.md).
"""

from __future__ import annotations

import json
import re

import pytest
from beam_helpers import mem0_file, mem0_row
from fake_anthropic import Reply, text

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.benchmarks.beam.judged import greedy_alignment

EVENTS = ["event A took place", "event B took place", "event C took place"]
ANSWER = "B came first\nthen A\nsomething unrelated"  # B, A, and a line matching no item


def _rows() -> list[dict]:
    summ = mem0_row(0, 16, "summarization", [None, None], answer="An invented summary.")
    summ["rubric"] = ["half fact one", "full fact two"]
    order = mem0_row(0, 4, "event_ordering", [None, None, None], answer=ANSWER)
    order["rubric"] = list(EVENTS)
    for row in (summ, order):
        row["cutoff_results"]["top_10"]["nugget_scores"] = []
    return [summ, order]


def _respond(request) -> Reply:
    prompt = request.prompt
    if "<rubric_item>" in prompt:  # an item call: "half ..." gets 0.5, anything else 1
        item = re.search(r"<rubric_item>\n(.*?)\n</rubric_item>", prompt, re.S).group(1)
        return text(json.dumps({"score": 0.5 if item.startswith("half") else 1, "reason": "x"}))
    line = re.search(r"<predicted_answer>\n(.*?)\n</predicted_answer>", prompt, re.S).group(1)
    item = re.search(r"<gold_answer>\n(.*?)\n</gold_answer>", prompt, re.S).group(1)
    letter = item.split()[1]  # "event A took place" -> "A"
    return text("yes" if re.search(rf"\b{letter}\b", line) else "no")


def _run(typed_config, tmp_path, server, *extra):
    mem0_file(tmp_path / "answers.json", _rows())
    cfg = typed_config(
        "data=file", "tracking=none", "benchmark=beam", "scorer=judge", "beam.profile=official",
        f"data.path={tmp_path / 'answers.json'}", f"judge.base_url={server.url}",
        "judge.progress=false", f"judge.cache_path={tmp_path / 'cache.sqlite'}", *extra,
    )
    return run_beam(cfg, tmp_path / "out", tmp_path)


def test_official_judge_never_sees_the_question_and_truncates_halves(
    typed_config, tmp_path, fake_anthropic
):
    fake_anthropic.responder = _respond
    result = _run(typed_config, tmp_path, fake_anthropic)
    requests = fake_anthropic.messages_requests()
    item_prompts = [r.prompt for r in requests if "<rubric_item>" in r.prompt]
    assert len(item_prompts) == 5  # 2 + 3 rubric items
    assert not any("<question>" in prompt or "What invented thing" in prompt
                   for prompt in item_prompts)
    official = result.summary["figures"][p.OFFICIAL]["abilities"]
    assert official["summarization"]["score"] == 0.5  # int(0.5) = 0, int(1) = 1
    nugget = result.summary["figures"][p.NUGGET]["abilities"]
    assert nugget["summarization"]["avg_score"] == 0.75  # the same verdicts, 0.5 kept
    assert result.summary["judge"]["profile"] == p.OFFICIAL
    assert json.loads((tmp_path / "out" / "card.json").read_text())["headline_profile"] == (
        p.OFFICIAL)


def test_event_ordering_is_tau_b_over_lines_aligned_by_yes_no_calls(
    typed_config, tmp_path, fake_anthropic
):
    fake_anthropic.responder = _respond
    result = _run(typed_config, tmp_path, fake_anthropic)
    align = [r for r in fake_anthropic.messages_requests() if "<rubric_item>" not in r.prompt]
    assert len(align) == 3 * 3  # every (line, item) pair: 3 lines x 3 items
    # matches: line 0 (B) -> item 1, line 1 (A) -> item 0, line 2 -> none (tied last).
    # union = items 0,1,2 + line 2; reference ranks [1,2,3,5], system ranks [2,1,5,3]:
    # 4 concordant, 2 discordant pairs, no ties -> tau_b = 2/6, tau_norm = (1/3 + 1) / 2 = 2/3
    order = result.summary["figures"][p.OFFICIAL]["abilities"]["event_ordering"]
    assert order["score"] == pytest.approx(2 / 3)
    rows = [json.loads(line) for line in (tmp_path / "out" / "scores.jsonl").open()]
    assert rows[1]["order_tau_norm"] == pytest.approx(2 / 3)
    assert rows[1][p.NUGGET]["score"] == 1.0  # nugget: event ordering is its item mean
    assert result.summary["judge"]["alignment"]["counts"]["calls_made"] == 9
    # all ten abilities are not there: no mean of ten, the mean of the two measured shown
    assert result.summary["figures"][p.OFFICIAL]["measured"] == 2


def test_official_dry_run_counts_items_and_alignment_calls(typed_config, tmp_path, fake_anthropic):
    result = _run(typed_config, tmp_path, fake_anthropic, "judge.dry_run=true")
    estimate = result.summary["judge"]["dry_run_estimate"]
    assert (estimate["rubric_items"], estimate["alignment_calls"], estimate["calls_total"]) == (
        5, 9, 14)
    assert fake_anthropic.messages_requests() == []


def test_strict_keeps_halves_and_shows_the_question(typed_config, tmp_path, fake_anthropic):
    fake_anthropic.responder = _respond
    result = _run(typed_config, tmp_path, fake_anthropic, "beam.strict=true")
    item_prompts = [r.prompt for r in fake_anthropic.messages_requests()
                    if "<rubric_item>" in r.prompt]
    assert all("<question>" in prompt for prompt in item_prompts)
    official = result.summary["figures"][p.OFFICIAL]["abilities"]
    assert official["summarization"]["score"] == 0.75  # 0.5 kept
    assert result.summary["judge"]["strict"] is True


@pytest.mark.parametrize(
    ("n_lines", "same", "expected"),
    [
        pytest.param(2, {(0, 0), (1, 0), (1, 1)}, [0, 1], id="used-item-skipped"),
        pytest.param(2, {(0, 1), (1, 1)}, [1, None], id="second-line-unmatched"),
        pytest.param(1, set(), [None], id="none"),
    ],
)
def test_greedy_alignment_takes_the_first_unused_item(n_lines, same, expected):
    assert greedy_alignment(n_lines, 2, lambda j, k: (j, k) in same) == expected


# the judged-run guarantees under beam-official: 5 rubric-item calls + 9 alignment calls


def test_official_rerun_pays_nothing_for_items_or_alignment(typed_config, tmp_path, fake_anthropic):
    fake_anthropic.responder = _respond
    first = _run(typed_config, tmp_path, fake_anthropic)
    assert len(fake_anthropic.messages_requests()) == 14
    fake_anthropic.clear()
    again = _run(typed_config, tmp_path, fake_anthropic, "overwrite=true")
    assert fake_anthropic.requests == []
    judge = again.summary["judge"]
    assert (judge["counts"]["calls_made"], judge["counts"]["cache_hits"]) == (0, 5)
    alignment = judge["alignment"]["counts"]
    assert (alignment["calls_made"], alignment["cache_hits"]) == (0, 9)
    assert again.summary["figures"] == first.summary["figures"]


def test_official_batch_mode_equals_realtime(typed_config, tmp_path, fake_anthropic):
    fake_anthropic.responder = _respond
    realtime = _run(typed_config, tmp_path, fake_anthropic,
                    f"judge.cache_path={tmp_path / 'rt.sqlite'}")
    (tmp_path / "out").rename(tmp_path / "rt")
    fake_anthropic.clear()
    batch = _run(typed_config, tmp_path, fake_anthropic, "judge.mode=batch",
                 "judge.batch.poll_interval_s=0.01", f"judge.cache_path={tmp_path / 'b.sqlite'}")
    assert fake_anthropic.batch_requests_submitted() >= 1  # the Batch API was used
    paid = fake_anthropic.batch_requests_submitted() + len(fake_anthropic.messages_requests())
    assert paid == 14  # each item and each alignment pair once, realtime or in a batch
    assert batch.summary["figures"] == realtime.summary["figures"]
    rows = [(tmp_path / d / "scores.jsonl").read_text() for d in ("rt", "out")]
    assert rows[0] == rows[1]


def test_official_stopped_run_resumes_and_pays_no_call_twice(typed_config, tmp_path, fake_anthropic):
    from locomo_exp.llm.stop import CallsStop, CallsStopped

    stop = CallsStop()

    def respond(request):
        if len(fake_anthropic.messages_requests()) >= 3:
            stop.set("stopped for the test")
        return _respond(request)

    fake_anthropic.responder = respond
    mem0_file(tmp_path / "answers.json", _rows())
    cfg = typed_config(
        "data=file", "tracking=none", "benchmark=beam", "scorer=judge", "beam.profile=official",
        f"data.path={tmp_path / 'answers.json'}", f"judge.base_url={fake_anthropic.url}",
        "judge.progress=false", f"judge.cache_path={tmp_path / 'cache.sqlite'}",
        "judge.max_concurrency=1",
    )
    with pytest.raises(CallsStopped):
        run_beam(cfg, tmp_path / "a", tmp_path, calls_stop=stop)
    first = [r.prompt for r in fake_anthropic.messages_requests()]
    assert 3 <= len(first) < 14
    fake_anthropic.clear()
    fake_anthropic.responder = _respond
    done = run_beam(cfg, tmp_path / "b", tmp_path)
    second = [r.prompt for r in fake_anthropic.messages_requests()]
    assert len(first) + len(second) == 14
    assert sorted(first + second) == sorted(set(first + second))  # nothing asked twice
    order = done.summary["figures"][p.OFFICIAL]["abilities"]["event_ordering"]
    assert order["score"] == pytest.approx(2 / 3)  # as the uninterrupted run
