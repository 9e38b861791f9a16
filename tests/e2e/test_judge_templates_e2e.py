"""End to end with ``python -m locomo_exp``: a template reproduces a stored J through a
replaying fake, and a sweep over two templates is the "same answers, two prompts"
experiment with its paired comparison, in one command (issue 16 §2-3)."""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
import pytest
from conftest import EXAMPLE, run_cli
from fake_anthropic import FAKE_API_KEY, FakeAnthropicServer, text
from scipy.stats import binomtest

pytestmark = pytest.mark.slow

# this test's own wording, laid out so the fake can read the fields back
TEMPLATE = """\
name: test-replay-label
version: "1"
system: You check answers about a long chat between two people.
user: |
  QUESTION>>{question}<<
  REFERENCE>>{gold_answer}<<
  SYSTEM ANSWER>>{generated_answer}<<
  Reply only with a JSON object: {{"label": "CORRECT"}} when the system answer
  matches the reference, else {{"label": "WRONG"}}.
fields: {generated_answer: predicted_answer}
response_format: json_object
json_key: label
labels: {CORRECT: 100, WRONG: 0}
escape_untrusted: false
temperature: 0
max_tokens: 64
"""


def _fill(question: str, gold: str, answer: str) -> str:
    return (
        f"QUESTION>>{question}<<\nREFERENCE>>{gold}<<\nSYSTEM ANSWER>>{answer}<<\n"
        'Reply only with a JSON object: {"label": "CORRECT"} when the system answer\n'
        'matches the reference, else {"label": "WRONG"}.\n'
    )


def test_zeps_answers_judged_with_a_template_replaying_zeps_grades_give_its_published_j(
    fake_anthropic: FakeAnthropicServer, shared_data: Path, tmp_path: Path
) -> None:
    grades_file = shared_data / "predictions" / "zep_locomo_grades.json"
    rows = [r for rs in json.loads(grades_file.read_text()).values() for r in rs if r["category"] != 5]
    expected = {_fill(r["question"], str(r["golden_answer"]), r["answer"]): r["grade"] for r in rows}
    assert len(rows) == 1540

    def replay(request) -> object:  # Zep's stored gpt-4o-mini verdict for this very prompt
        return text(json.dumps({"label": "CORRECT" if expected[request.prompt] else "WRONG"}))

    fake_anthropic.responder = replay
    template = tmp_path / "replay.yaml"
    template.write_text(TEMPLATE, encoding="utf-8")
    store = f"sqlite:///{tmp_path}/mlflow.db"
    done = run_cli(
        *[
            "scorer=judge", "data=zep", f"data.path={grades_file}", "judge.runs=1",
            "judge.protocol=template", f"judge.template={template}", "judge.audit.n=0",
            f"judge.cache_path={tmp_path}/cache.sqlite", "judge.progress=false",
            f"tracking.uri={store}", f"hydra.run.dir={tmp_path}/run",
        ],
        cwd=tmp_path, server=fake_anthropic,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]

    requests = fake_anthropic.messages_requests()
    assert len(requests) == 1536  # 4 exact repeats share their call
    assert {r.prompt for r in requests} == set(expected)  # byte for byte the template filled here
    assert {r.body["temperature"] for r in requests} == {0.0}  # the template's, not the preset's 0.5
    assert {r.body["max_tokens"] for r in requests} == {64}
    assert {r.body["system"] for r in requests} == {"You check answers about a long chat between two people."}

    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    j = {key: round(group["mean"], 2) for key, group in summary["judge"]["j"].items()}
    # getzep/zep-papers README: 74.11 / 66.04 / 67.71 / 79.79, overall 75.13
    assert j == {"1": 74.11, "2": 66.04, "3": 67.71, "4": 79.79, "overall": 75.13}
    sha = summary["judge"]["template"]["sha256"]
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert card["judge"]["template_sha256"] == sha and card["judge"]["protocol"] == "template"
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"template test-replay-label version 1 (sha256 {sha[:12]}" in report
    assert "sent byte for byte (escape_untrusted: false)" in report
    client = mlflow.MlflowClient(tracking_uri=store)
    [run] = client.search_runs(client.get_experiment_by_name("locomo_exp").experiment_id)
    assert run.data.params["judge.template_sha256"] == sha
    assert run.data.metrics["j/overall"] == pytest.approx(75.1299, abs=1e-3)
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and FAKE_API_KEY.encode() in p.read_bytes()]
    assert leaked == []


LENIENT = """\
name: test-lenient
version: "1"
user: "Q {question} / gold {gold_answer} / got {predicted_answer} / same meaning? yes or no"
contains: {yes: 100}
otherwise: 0
temperature: 0
max_tokens: 10
"""


def test_a_sweep_over_two_templates_is_one_command_with_the_paired_comparison(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    strict = LENIENT.replace("test-lenient", "test-strict").replace("same meaning?", "exactly right?")
    (tmp_path / "lenient.yaml").write_text(LENIENT, encoding="utf-8")
    (tmp_path / "strict.yaml").write_text(strict, encoding="utf-8")
    example = json.loads(EXAMPLE.read_text())
    judged = [r for r in example if r["category"] in (1, 2, 3, 4)]

    def respond(request) -> object:  # lenient accepts all; strict accepts questions with 'Bram'
        accept = "same meaning?" in request.prompt or "Bram" in request.prompt
        return text("Yes." if accept else "No.")

    fake_anthropic.responder = respond
    store = f"sqlite:///{tmp_path}/mlflow.db"
    done = run_cli(
        *[
            "-m", "scorer=judge", "judge.protocol=template",
            f"judge.template={tmp_path}/lenient.yaml,{tmp_path}/strict.yaml",
            "judge.runs=1", "judge.audit.n=0", f"judge.cache_path={tmp_path}/cache.sqlite",
            "judge.progress=false", f"tracking.uri={store}", f"hydra.sweep.dir={tmp_path}/sweep",
        ],
        cwd=tmp_path, server=fake_anthropic,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(fake_anthropic.messages_requests()) == 2 * len(judged)
    summary = json.loads((tmp_path / "sweep" / "sweep_summary.json").read_text())
    rows = {row["job"]: row for row in summary["rows"]}
    strict_j = 100.0 * sum("Bram" in r["question"] for r in judged) / len(judged)
    assert rows[0]["j_overall"] == pytest.approx(100.0)
    assert rows[1]["j_overall"] == pytest.approx(strict_j)
    vs = rows[1]["vs_baseline"]["j"]  # job 1 (strict) minus job 0 (lenient), same answers
    assert vs["n"] == len(judged) and vs["diff"] == pytest.approx(strict_j - 100.0)
    discordant = sum("Bram" not in r["question"] for r in judged)
    assert vs["p_holm"] == pytest.approx(binomtest(0, discordant, 0.5).pvalue)  # exact McNemar
    compare_md = (tmp_path / "sweep" / "vs_baseline" / "1" / "compare.md").read_text()
    shas = [
        json.loads((tmp_path / "sweep" / str(job) / "summary.json").read_text())["judge"]["template"]["sha256"]
        for job in (1, 0)
    ]
    assert f"judge.template_sha256: {shas[0]} vs {shas[1]}" in compare_md


def test_a_bad_template_is_one_line_and_nothing_is_written(fake_anthropic: FakeAnthropicServer, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nversion: 1\nuser: '{question} {gold_answer} {predicted_answer}'\n", encoding="utf-8")
    done = run_cli(
        *["scorer=judge", "judge.protocol=template", f"judge.template={bad}", f"hydra.run.dir={tmp_path}/run",
         f"tracking.uri=sqlite:///{tmp_path}/mlflow.db", f"judge.cache_path={tmp_path}/cache.sqlite"],
        cwd=tmp_path, server=fake_anthropic,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: judge.template={bad}: no verdict rule: give json_key (with labels or score_range), "
        "contains, or regex"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]
    assert fake_anthropic.messages_requests() == []
