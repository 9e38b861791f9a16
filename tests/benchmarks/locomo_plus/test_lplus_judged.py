"""Judged LoCoMo-Plus runs (scorer=judge) against the fake OpenAI server on 127.0.0.1.

The answers file is made up here (six items, one per category); the real LoCoMo-Plus files
have no licence and are never copied.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FAKE_OPENAI_KEY, FakeOpenAIServer
from fake_server import RecordedRequest, Reply

from locomo_exp.benchmarks.locomo_plus.job import run_locomo_plus
from locomo_exp.benchmarks.locomo_plus.judged import _authors_reading
from locomo_exp.benchmarks.locomo_plus.protocol import SYSTEM_PROMPT
from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.llm.errors import JudgeFatalAPIError, JudgeInterrupted

ITEMS: list[dict[str, Any]] = [
    {"category": "multi-hop", "question_input": "Which two cities did Ana visit?",
     "evidence": "", "ground_truth": "Oslo and Lima", "prediction": "Oslo and Lima.",
     "conversation": 0},
    {"category": "temporal", "question_input": "When did Ben move?", "evidence": "",
     "ground_truth": "May 2023", "prediction": "In May 2023.", "conversation": 1},
    {"category": "common-sense", "question_input": "Would Ana like a cold trip?",
     "evidence": "", "ground_truth": "Probably not", "prediction": "No.", "conversation": 2},
    {"category": "single-hop", "question_input": "What is Ben's dog called?", "evidence": "",
     "ground_truth": "Rex", "prediction": "Rex <b>!</b>", "conversation": 0},
    {"category": "adversarial", "question_input": "What is Ana's cat called?", "evidence": "",
     "ground_truth": "", "prediction": "It was never mentioned.", "conversation": 1},
    {"category": "Cognitive", "question_input": "Ana: Any ideas for my weekend?",
     "evidence": "Ana：I hurt my knee last week.\nBen：Take care of it.",
     "ground_truth": "", "prediction": "Maybe something gentle, given your knee.",
     "conversation": 2, "relation_type": "state"},
]

EXPECTED_COGNITIVE_PROMPT = (
    "Kind of item: Cognitive\n"
    "Labels allowed: correct or wrong\n"
    "Standard: There is no reference answer. Earlier the user said the cue shown below; the "
    "question comes later in the same conversation. Label correct when the reply reflects "
    "the cue or makes use of it; wrong when it ignores it.\n\n"
    "<question>\nAna: Any ideas for my weekend?\n</question>\n\n"
    "<cue>\nAna：I hurt my knee last week.\nBen：Take care of it.\n</cue>\n\n"
    "<reply>\nMaybe something gentle, given your knee.\n</reply>\n\n"
    'Answer with the JSON object {"label": ..., "reason": ...}; label is correct or wrong.'
)
EXPECTED_ADVERSARIAL_PROMPT = (
    "Kind of item: adversarial\n"
    "Labels allowed: correct or wrong\n"
    "Standard: The conversation does not contain what the question asks about, so there is "
    "no reference answer. Label correct only when the reply says the thing was not mentioned "
    "or is not known; wrong when it answers as if it knew.\n\n"
    "<question>\nWhat is Ana's cat called?\n</question>\n\n"
    "<reply>\nIt was never mentioned.\n</reply>\n\n"
    'Answer with the JSON object {"label": ..., "reason": ...}; label is correct or wrong.'
)


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(ITEMS, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def judged_run(typed_config: Any, fake_openai: FakeOpenAIServer, tmp_path: Path, answers: Path,
               monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)

    def _run(*overrides: str, out: str = "out") -> Any:
        cfg = typed_config(
            "benchmark=locomo_plus", "scorer=judge", "data=file", f"data.path={answers}",
            "tracking.enabled=false", f"judge.base_url={fake_openai.base_url}",
            f"judge.cache_path={tmp_path}/cache.sqlite", "judge.progress=false",
            "judge.retry_initial_backoff_s=0.001", "judge.retry_max_backoff_s=0.01",
            "report.bootstrap_samples=50", *overrides,
        )
        return run_locomo_plus(cfg, tmp_path / out, tmp_path)

    return _run


def by_kind(requests: list[RecordedRequest]) -> dict[str, RecordedRequest]:
    return {r.prompt.split("\n", 1)[0].removeprefix("Kind of item: "): r for r in requests}


def test_each_category_sends_its_own_protocol_with_the_authors_judge_settings(
    judged_run: Any, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.responder = lambda request: Reply(text='{"label": "correct", "reason": "ok"}')
    result = judged_run()
    requests = fake_openai.messages_requests()
    assert len(requests) == 6  # one call per item
    sent = by_kind(requests)
    assert sorted(sent) == sorted(i["category"] for i in ITEMS)
    assert sent["Cognitive"].prompt == EXPECTED_COGNITIVE_PROMPT
    assert sent["adversarial"].prompt == EXPECTED_ADVERSARIAL_PROMPT  # no reference shown
    assert "<reference_answer>\nRex\n</reference_answer>" in sent["single-hop"].prompt
    assert "<reply>\nRex &lt;b&gt;!&lt;/b&gt;\n</reply>" in sent["single-hop"].prompt
    assert sent["temporal"].prompt.startswith(
        "Kind of item: temporal\nLabels allowed: correct or wrong\n")
    assert sent["common-sense"].prompt.split("\n")[1] == "Labels allowed: correct, partial or wrong"
    for request in requests:
        body = request.body
        assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert body["model"] == "gpt-4o-mini-2024-07-18"
        assert body["temperature"] == 0.0
        assert body["max_tokens"] == 512
    ours = result.summary["readings"]["ours"]
    assert ours["overall"] == 1.0 and ours["n_scored"] == 6
    assert ours["by_relation"]["state"]["mean"] == 1.0
    assert result.summary["verdicts"]["source"] == "judged"
    assert FAKE_OPENAI_KEY not in json.dumps(result.summary)


def test_a_by_kind_template_sends_the_users_text_per_category(
    judged_run: Any, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    template = tmp_path / "mine.yaml"
    kinds = ["multi-hop", "temporal", "common-sense", "single-hop", "adversarial", "Cognitive"]
    texts = {k: f"[{k}] Q={{question}} REF={{gold_answer}} A={{predicted_answer}} "
                f"kind={{category_name}}" for k in kinds}
    template.write_text(json.dumps({
        "name": "mine", "version": "1", "by_kind": texts, "json_key": "label",
        "labels": {"correct": 100, "partial": 50, "wrong": 0}, "escape_untrusted": False,
    }), encoding="utf-8")
    fake_openai.responder = lambda request: Reply(text='{"label": "partial"}')
    result = judged_run("judge.protocol=template", f"judge.template={template}")
    prompts = sorted(r.prompt for r in fake_openai.messages_requests())
    expected = sorted(
        f"[{i['category']}] Q={i['question_input']} "
        f"REF={i['evidence'] if i['category'] == 'Cognitive' else i['ground_truth']} "
        f"A={i['prediction']} kind={i['category']}"
        for i in ITEMS
    )
    assert prompts == expected  # byte for byte; a Cognitive item's {gold_answer} is its cue
    assert result.summary["readings"]["ours"]["overall"] == 0.5


def test_incorrect_scores_0_with_our_parser_and_1_with_the_authors(
    judged_run: Any, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = lambda request: Reply(text="Incorrect.")
    ours = judged_run(out="ours")
    assert ours.summary["readings"]["ours"]["overall"] == 0.0
    assert ours.summary["readings"]["ours"]["n_scored"] == 6
    assert ours.summary["parser"]["derived_from_no_label"] == 0
    calls = len(fake_openai.messages_requests())

    store = tmp_path / "mlflow.db"
    theirs = judged_run("judge.parser=authors", "tracking.enabled=true",
                        f"tracking.uri=sqlite:///{store}", out="authors")
    assert len(fake_openai.messages_requests()) == calls  # the cached replies, re-read
    assert theirs.summary["headline"] == "authors"
    assert theirs.summary["readings"]["authors"]["overall"] == 1.0
    assert theirs.summary["readings"]["ours"]["overall"] == 0.0
    parser = theirs.summary["parser"]
    assert (parser["derived_from_no_label"], parser["derived_from_api_errors"]) == (6, 0)
    line = ("judge.parser=authors: 0 verdicts derived from API errors; 6 from replies that "
            "held no label")
    assert line in theirs.console
    assert line in (theirs.output_dir / "report.md").read_text(encoding="utf-8")
    assert "the authors' reading" in theirs.console[1]
    assert theirs.metrics["parser/derived_from_no_label"] == 6
    assert theirs.metrics["authors/overall"] == 100.0 and theirs.metrics["ours/overall"] == 0.0
    import mlflow

    run = mlflow.MlflowClient(f"sqlite:///{store}").get_run(theirs.run_id)
    assert run.data.metrics["parser/derived_from_no_label"] == 6
    assert run.data.params["judge.parser"] == "authors"
    rows = [json.loads(x) for x in (theirs.output_dir / "scores.jsonl").read_text().splitlines()]
    assert [(r["score"], r["score_authors"]) for r in rows] == [(0.0, 1.0)] * 6


def test_a_failed_call_is_read_by_the_authors_as_their_wrapper_text() -> None:
    failed = JudgeResult(score=None, outcome="api_error",
                         error="Error code: 401 - Incorrect API key provided")
    assert _authors_reading(failed) == (1.0, "api_error")
    no_label = JudgeResult(score=None, outcome="parse_failure", raw="I cannot tell.")
    assert _authors_reading(no_label) == (0.0, "no_label")
    labelled = JudgeResult(score=50.0, raw='{"label": "partial", "reason": "x"}')
    assert _authors_reading(labelled) == (0.5, "")


def answer_of(request: RecordedRequest) -> Reply:
    kind = request.prompt.split("\n", 1)[0]
    return Reply(text='{"label": "wrong", "reason": "no"}' if "temporal" in kind or
                 "Cognitive" in kind else '{"label": "correct", "reason": "yes"}')


def test_batch_mode_gives_the_realtime_figures(
    judged_run: Any, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = answer_of
    realtime = judged_run(out="rt")
    fake_openai.clear()
    batch = judged_run("judge.mode=batch", "judge.batch.poll_interval_s=0.01",
                       "judge.batch.max_poll_interval_s=0.01",
                       f"judge.cache_path={tmp_path}/batch_cache.sqlite", out="batch")
    assert fake_openai.batch_create_requests()  # the batch API was used
    assert batch.summary["judge"]["mode"] == "batch"
    assert batch.summary["readings"] == realtime.summary["readings"]
    assert realtime.summary["readings"]["ours"]["overall"] == round(4 / 6, 4)


def test_a_rerun_pays_nothing(judged_run: Any, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.responder = answer_of
    first = judged_run(out="one")
    assert first.summary["judge"]["counts"]["calls_made"] == 6
    fake_openai.clear()
    again = judged_run(out="two")
    assert fake_openai.requests == []
    assert again.summary["judge"]["counts"]["calls_made"] == 0
    assert again.summary["judge"]["counts"]["cache_hits"] == 6
    assert again.summary["readings"] == first.summary["readings"]
    assert any("0 calls made, 6 answered from the cache" in line for line in again.console)


def test_resume_after_an_interrupt_pays_no_call_twice(
    judged_run: Any, fake_openai: FakeOpenAIServer
) -> None:
    seen: list[str] = []
    lock = threading.Lock()

    def interrupt_after_three(request: RecordedRequest) -> Reply:
        with lock:
            seen.append(request.prompt)
            if len(seen) == 3:  # Ctrl-C while the third call is answered
                os.kill(os.getpid(), signal.SIGINT)
        return answer_of(request)

    fake_openai.responder = interrupt_after_three
    with pytest.raises((JudgeInterrupted, KeyboardInterrupt)):
        judged_run("judge.max_concurrency=1", "judge.drain_s=5", out="first")
    fake_openai.wait_idle()
    first = [r.prompt for r in fake_openai.messages_requests()]
    assert 3 <= len(first) < 6
    fake_openai.clear()
    fake_openai.responder = answer_of
    done = judged_run("judge.max_concurrency=1", out="second")
    second = [r.prompt for r in fake_openai.messages_requests()]
    assert sorted(first + second) == sorted(set(first + second))  # no prompt asked twice
    assert len(first) + len(second) == 6
    assert done.summary["judge"]["counts"]["cache_hits"] == len(first)
    assert done.summary["readings"]["ours"]["n_scored"] == 6


def test_resume_after_a_fatal_api_error_pays_no_call_twice(
    judged_run: Any, fake_openai: FakeOpenAIServer
) -> None:
    count = [0]

    def fail_fourth(request: RecordedRequest) -> Reply:
        count[0] += 1
        if count[0] == 4:
            return Reply(status=401, error_type="invalid_request_error",
                         message="Incorrect API key provided")
        return answer_of(request)

    fake_openai.responder = fail_fourth
    with pytest.raises(JudgeFatalAPIError):
        judged_run("judge.max_concurrency=1", out="first")
    first = [r.prompt for r in fake_openai.messages_requests()]
    fake_openai.clear()
    fake_openai.responder = answer_of
    done = judged_run("judge.max_concurrency=1", out="second")
    second = [r.prompt for r in fake_openai.messages_requests()]
    assert len(first) == 4 and len(second) == 3  # the 3 answered calls are not paid again
    assert done.summary["judge"]["counts"]["cache_hits"] == 3


def test_dry_run_counts_and_prices_the_calls(
    judged_run: Any, fake_openai: FakeOpenAIServer
) -> None:
    result = judged_run("judge.dry_run=true")
    assert fake_openai.requests == []
    estimate = result.summary["judge"]["dry_run"]
    assert (estimate["calls_total"], estimate["calls_cached"], estimate["calls_to_make"]) == (
        6, 0, 6)
    # gpt-4o-mini list prices: $0.15 in, $0.60 out per million tokens
    expected = (estimate["estimated_input_tokens"] * 0.15
                + estimate["estimated_output_tokens"] * 0.60) / 1e6
    assert estimate["estimated_cost_usd"] == pytest.approx(expected)
    assert estimate["estimated_cost_usd"] > 0
    assert any(line.startswith("Dry run: 6 judge calls (0 cached, 6 to make), estimated cost $")
               for line in result.console)
    assert result.summary["readings"]["ours"]["status"].startswith("dry run")


def test_a_locomo_protocol_is_refused_in_one_line(
    typed_config: Any, tmp_path: Path, answers: Path
) -> None:
    cfg = typed_config("scorer=judge", "data=file", f"data.path={answers}",
                       "data.format=locomo_plus", "tracking.enabled=false")
    with pytest.raises(ValueError, match=r"^judge.protocol=rubric judges LoCoMo's categories"):
        run_locomo_plus(cfg, tmp_path / "out", tmp_path)
    assert not (tmp_path / "out").exists()


def test_an_answers_file_is_read_without_verdicts_only_when_judging(
    typed_config: Any, tmp_path: Path, answers: Path
) -> None:
    cfg = typed_config("data=file", f"data.path={answers}", "tracking.enabled=false")
    with pytest.raises(ValueError, match="field 'judge_label': missing or not a string .*add scorer=judge"):
        run_locomo_plus(cfg, tmp_path / "out", tmp_path)


_THREE = "correct, partial or wrong"
_ENTITIES = ("Label correct when the reply names the same entities as the reference answer; "
             "partial when it gets the main entity right but leaves out details the reference "
             "gives; wrong when the main entity is missing or different.")


def _factual_prompt(kind: str, labels: str, standard: str, question: str, gold: str,
                    reply: str) -> str:
    return (f"Kind of item: {kind}\nLabels allowed: {labels}\nStandard: {standard}\n\n"
            f"<question>\n{question}\n</question>\n\n"
            f"<reference_answer>\n{gold}\n</reference_answer>\n\n"
            f"<reply>\n{reply}\n</reply>\n\n"
            f'Answer with the JSON object {{"label": ..., "reason": ...}}; label is {labels}.')


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        pytest.param("multi-hop", _factual_prompt(
            "multi-hop", _THREE, _ENTITIES, "Which two cities did Ana visit?", "Oslo and Lima",
            "Oslo and Lima."), id="multi-hop"),
        pytest.param("temporal", _factual_prompt(
            "temporal", "correct or wrong",
            "Label correct when the reply gives the same time, date, duration or order of "
            "events as the reference answer (another format of the same date counts); wrong "
            "otherwise.", "When did Ben move?", "May 2023", "In May 2023."), id="temporal"),
        pytest.param("common-sense", _factual_prompt(
            "common-sense", _THREE,
            "The question may need general knowledge on top of the conversation. Label correct "
            "when the reply reaches the reference's conclusion; partial when it is on the right "
            "track but incomplete; wrong otherwise.", "Would Ana like a cold trip?",
            "Probably not", "No."), id="common-sense"),
        pytest.param("single-hop", _factual_prompt(
            "single-hop", _THREE, _ENTITIES, "What is Ben's dog called?", "Rex",
            "Rex &lt;b&gt;!&lt;/b&gt;"), id="single-hop"),
        pytest.param("adversarial", EXPECTED_ADVERSARIAL_PROMPT, id="adversarial"),
        pytest.param("Cognitive", EXPECTED_COGNITIVE_PROMPT, id="Cognitive"),
    ],
)
def test_each_categorys_prompt_is_sent_byte_for_byte(
    judged_run: Any, fake_openai: FakeOpenAIServer, kind: str, expected: str
) -> None:
    fake_openai.responder = lambda request: Reply(text='{"label": "correct", "reason": "ok"}')
    judged_run()
    request = by_kind(fake_openai.messages_requests())[kind]
    assert request.body["messages"] == [{"role": "system", "content": SYSTEM_PROMPT},
                                        {"role": "user", "content": expected}]


def test_a_failed_call_is_unscored_for_us_and_counted_when_the_authors_derive_a_verdict(
    judged_run: Any, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    def fail_cognitive(request: RecordedRequest) -> Reply:
        if request.prompt.startswith("Kind of item: Cognitive"):  # fails after its retries
            return Reply(status=500, error_type="server_error",
                         message="Incorrect state on the server")
        return Reply(text='{"label": "wrong", "reason": "no"}')

    fake_openai.responder = fail_cognitive
    store = tmp_path / "mlflow.db"
    result = judged_run("judge.parser=authors", "judge.max_retries=1", "judge.max_error_rate=0.5",
                        "tracking.enabled=true",
                        f"tracking.uri=sqlite:///{store}")
    ours, theirs = result.summary["readings"]["ours"], result.summary["readings"]["authors"]
    assert (ours["n_scored"], ours["n_unscored"], ours["cognitive"]) == (5, 1, None)
    # their wrapper's "[API Error: ... Incorrect ...]" text holds "correct": read as correct
    assert theirs["cognitive"] == 1.0 and theirs["overall"] == round(1 / 6, 4)
    parser = result.summary["parser"]
    assert (parser["derived_from_api_errors"], parser["derived_from_no_label"]) == (1, 0)
    line = ("judge.parser=authors: 1 verdicts derived from API errors; 0 from replies that "
            "held no label")
    assert line in result.console
    assert line in (result.output_dir / "report.md").read_text(encoding="utf-8")
    import mlflow

    run = mlflow.MlflowClient(f"sqlite:///{store}").get_run(result.run_id)
    assert run.data.metrics["parser/derived_from_api_errors"] == 1
    assert run.data.metrics["judge/api_error"] == 1
