"""Provenance, scales and the stored verdicts' judge, in every output (trial items 5, 6, 7, 13).

Checked on the real shared files: a LongMemEval run carries LoCoMo's provenance (schema and
card versions, git commit, command line, report lines, an MLflow description); every
summary and card names each score's scale; the judge behind stored verdicts is named as far as
the file or a published source says; LongMemEval comparisons name runs by their answer file and
the report names the dataset variant in LongMemEval's terms beside the published rows'.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, run_job
from fake_anthropic import accept_all
from lme_helpers import GPT4O, HUNK_MINI, HYPOTHESES, REFERENCE, need_shared

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.benchmarks.longmemeval.compare import compare_lme_runs
from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.benchmarks.longmemeval.tracking import run_description as lme_description
from locomo_exp.benchmarks.longmemeval.tracking import run_metrics, run_params
from locomo_exp.data.judge_source import stated_judge, stored_judge_source
from locomo_exp.tracking.headline import card_params, run_description

IN_CHECKOUT = (PROJECT_ROOT / ".git").exists()
MEM0_JUDGE = (
    "gpt-4o-mini, binary CORRECT/WRONG at temperature 0, per the Mem0 evaluation harness "
    "(mem0ai/mem0 evaluation/, the Mem0 paper); not recorded in the file"
)


def _read(out: Path) -> tuple[dict, dict, str, list[dict]]:
    summary = json.loads((out / "summary.json").read_text())
    card = json.loads((out / "card.json").read_text())
    rows = [json.loads(line) for line in (out / "scores.jsonl").open()]
    return summary, card, (out / "report.md").read_text(), rows


# --- item 5: scales -------------------------------------------------------------------------


def test_memobase_summary_and_card_name_each_scale_and_the_values_obey_it(tmp_path, shared_data):
    run_job(tmp_path, path=shared_data / "predictions" / "memobase_eval_0710.json")
    summary, card, _, rows = _read(tmp_path / "out")
    lexical = ["f1", "f1_locomo", "f1_squad", "f1_mem0", "bleu1", "f1_locomo_official"]
    assert summary["scales"] == {**dict.fromkeys(lexical, "0-1"), "stored_judge": "0-100"}
    assert list(summary)[:2] == ["schema_version", "scales"]  # the scale is read before any number
    assert card["scales"] == summary["scales"]
    # the values: memobase's published F1 0.5145 (mem0 variant) and stored J 75.78
    assert round(summary["metrics"]["f1_mem0"]["overall"]["mean"], 4) == 0.5145
    assert round(summary["stored_judge"]["overall"]["mean"], 2) == 75.78
    for name, scale in summary["scales"].items():
        top = 1.0 if scale == "0-1" else 100.0
        groups = summary["stored_judge"] if name == "stored_judge" else summary["metrics"][name]
        assert groups["overall"]["max"] == top  # a correct answer reaches the scale's top
    # scores.jsonl: each field on its metric's scale (docs/formats.md, "Scales")
    assert max(r["f1_mem0"] for r in rows) == 1.0 and max(r["stored_judge_score"] for r in rows) == 100.0


def test_a_judged_run_names_j_on_0_100(fake_anthropic, run_judged):
    fake_anthropic.responder = accept_all()
    result = run_judged(
        "scorer=both", "data=example", "judge.runs=1", "judge.min_successful_runs=1", "judge.audit.n=0"
    )
    summary, card, _, rows = _read(result.output_dir)
    assert summary["scales"]["j"] == card["scales"]["j"] == "0-100" and summary["scales"]["f1"] == "0-1"
    assert summary["judge"]["j"]["overall"]["mean"] == 100.0  # every answer accepted
    assert {r["j_mean"] for r in rows if "j_mean" in r} == {100.0}  # category 5 is not judged


def test_the_longmemeval_summary_and_card_name_their_scales(typed_config, tmp_path):
    need_shared()
    cfg = typed_config("data=file", "tracking=none", f"data.path={GPT4O}", f"data.reference={REFERENCE}")
    run_longmemeval(cfg, tmp_path / "out", tmp_path)
    summary, card, report, _ = _read(tmp_path / "out")
    assert summary["scales"] == card["scales"] == {"figures": "0-1", "rates": "0-1", "j_mean": "0-100"}
    assert summary["headline"]["figures"]["overall"]["accuracy"] == pytest.approx(0.724)  # 0-1
    assert "on 0-1 in summary.json (`scales`)" in report


# --- item 6: LongMemEval provenance, as LoCoMo's ----------------------------------------------


def test_longmemeval_outputs_carry_locomo_provenance(typed_config, tmp_path):
    need_shared()
    cfg = typed_config("data=file", "tracking=none", f"data.path={GPT4O}", f"data.reference={REFERENCE}")
    run_longmemeval(cfg, tmp_path / "out", tmp_path)
    summary, card, report, _ = _read(tmp_path / "out")
    assert list(summary)[0] == "schema_version" and summary["schema_version"] == 2
    assert list(card)[:4] == ["card_version", "tool", "command_line", "date"]
    assert card["card_version"] == 1
    assert card["tool"]["name"] == "locomo_exp" and card["tool"]["version"] == "0.1.0"
    if IN_CHECKOUT:
        assert re.fullmatch(r"[0-9a-f]{40}", card["tool"]["git_commit"])
        assert f"- Tool: locomo_exp 0.1.0 (git {card['tool']['git_commit'][:12]})" in report
    assert card["command_line"]  # the test runner's argv, as LoCoMo's card records it
    assert f"- Command: `{card['command_line']}`" in report
    assert f"- Date: {card['date']}" in report
    # the MLflow description and params (pure builders; the job logs exactly these)
    metrics = run_metrics(summary)
    text = lme_description(metrics, summary, card)
    assert text.startswith("**overall 72.40** [68.32, 76.14] · task-averaged 72.75 · abstention 70.00")
    assert "Verdicts: stored (gpt-4o-2024-08-06); stored verdicts read from `autoeval_label.label`" in text
    assert "Tool: locomo_exp 0.1.0" in text and "Status: j ok (stored verdicts)" in text
    params = run_params(summary, card)
    assert params["stored_judge.field"] == "autoeval_label.label"
    assert params["tool.version"] == "0.1.0"


@pytest.mark.slow
def test_longmemeval_mlflow_run_has_a_description(typed_config, tmp_path):
    need_shared()
    import mlflow

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    cfg = typed_config("data=file", f"tracking.uri={uri}", f"data.path={GPT4O}", f"data.reference={REFERENCE}")
    result = run_longmemeval(cfg, tmp_path / "out", tmp_path)
    run = mlflow.MlflowClient(uri).get_run(result.run_id)
    assert run.data.tags["mlflow.note.content"].startswith("**overall 72.40**")
    assert run.data.params["stored_judge.judge"].startswith("gpt-4o-2024-08-06 (named by each row's")
    assert run.data.params["tool.version"] == "0.1.0"


# --- item 7: the judge behind stored J --------------------------------------------------------


def test_memobase_stored_j_names_the_mem0_harness_judge_as_published(tmp_path, shared_data):
    run_job(tmp_path, path=shared_data / "predictions" / "memobase_eval_0710.json")
    summary, card, report, _ = _read(tmp_path / "out")
    source = {"field": "llm_score", "model": None, "stated_in": None,
              "per_source": MEM0_JUDGE.removesuffix("; not recorded in the file"), "text": MEM0_JUDGE}
    assert summary["input"]["stored_judge_source"] == source
    assert card["stored_judge"] is True and card["stored_judge_source"] == source
    assert (f"- Stored J: verdicts another judge stored in the input file, read from `llm_score`; "
            f"judge: {MEM0_JUDGE}") in report
    params = card_params(card)
    assert params["stored_judge.field"] == "llm_score" and params["stored_judge.judge"] == MEM0_JUDGE
    text = run_description({"stored_judge/overall": 75.78}, card, {"f1": "ok"})
    assert text.startswith(f"**stored J 75.78** (the file's own verdicts from `llm_score`, judge: {MEM0_JUDGE}")


def test_zep_grades_judge_is_not_recorded_in_the_file(tmp_path, shared_data):
    run_job(tmp_path, path=shared_data / "predictions" / "zep_locomo_grades.json")
    summary, card, report, _ = _read(tmp_path / "out")
    assert card["stored_judge_source"] == {"field": "grade", "model": None, "stated_in": None,
                                           "per_source": None, "text": "not recorded in the file"}
    assert "read from `grade`; judge: not recorded in the file" in report


def test_a_file_naming_its_judge_in_metadata_is_recorded(tmp_path):
    records = [
        {"question_id": f"q{i}", "category": 2, "question": f"When did event {i} happen?",
         "ground_truth_answer": "7 May 2023",
         "cutoff_results": {"top_200": {"generated_answer": "7 May 2023", "judgment": verdict}}}
        for i, verdict in enumerate(["CORRECT", "WRONG"])
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"metadata": {"judge_model": "gpt-4.1-mini", "n": 2},
                                "evaluations": records}))
    run_job(tmp_path, path=path)
    summary, card, report, _ = _read(tmp_path / "out")
    assert card["stored_judge_source"] == {
        "field": "judgment", "model": "gpt-4.1-mini", "stated_in": "metadata.judge_model",
        "per_source": None,
        "text": "gpt-4.1-mini (named by the file's `metadata.judge_model`; protocol not recorded in the file)",
    }
    assert "judge: gpt-4.1-mini (named by the file's `metadata.judge_model`" in report
    assert summary["stored_judge"]["overall"]["mean"] == 50.0


def test_stated_judge_ignores_the_records_and_non_text():
    obj = {"run": {"config": {"judge_model": "m1"}}, "records": [{"judge_model": "inside"}], "judge_model": 3}
    assert stated_judge(obj, "records") == ("run.config.judge_model", "m1")
    assert stated_judge([{"judge_model": "x"}], None) is None  # a bare list states nothing
    assert stored_judge_source(None, ("k", "m"), None) is None  # no stored verdicts: nothing
    # a published source applies only to its own field
    assert stored_judge_source("grade", None, ("llm_score", "x"))["text"] == "not recorded in the file"


# --- item 13: LongMemEval compare names and the dataset variant -------------------------------


def test_longmemeval_compare_names_runs_by_answer_file(typed_config, tmp_path):
    need_shared()
    dirs = []
    for name, path in (("18-46-43", GPT4O), ("hunk", HUNK_MINI)):
        cfg = typed_config("data=file", "tracking=none", f"data.path={path}", f"data.reference={REFERENCE}")
        run_longmemeval(cfg, tmp_path / name, tmp_path)
        dirs.append(tmp_path / name)
    (pair,) = compare_lme_runs(dirs, bootstrap_samples=200)
    assert (pair.a, pair.b) == (GPT4O.name, HUNK_MINI.name)
    (labelled,) = compare_lme_runs(dirs, bootstrap_samples=200, labels=["gpt-4o", "mini"])
    assert (labelled.a, labelled.b) == ("gpt-4o", "mini")
    with pytest.raises(Exception, match="compare.labels: give 2 distinct non-empty names"):
        compare_lme_runs(dirs, labels=["same", "same"])


def test_the_report_names_the_variant_in_longmemevals_terms(typed_config, tmp_path):
    need_shared()
    cfg = typed_config("data=file", "tracking=none", f"data.path={GPT4O}", f"data.reference={REFERENCE}")
    run_longmemeval(cfg, tmp_path / "out", tmp_path)
    _, card, report, _ = _read(tmp_path / "out")
    assert card["reference"]["variant"] == "questions only"
    assert card["reference"]["variant_label"].startswith("unknown: the dataset file's haystacks are empty")
    assert "| gpt-4o-2024-08-06 | model: same model; prompt: not recorded with the stored labels " \
           "| oracle (longmemeval_oracle.json) | cannot tell from the dataset " \
           "file given: confirm the answers were made on oracle (longmemeval_oracle.json) |" in report
    assert "questions only (0.0" not in report


@pytest.mark.parametrize(
    ("run", "published", "expected"),
    [
        ("oracle", "oracle", "yes"),
        ("s", "oracle", "no (this run: S)"),
        ("m", "s", "no (this run: M)"),
        ("questions only", "oracle",
         "cannot tell from the dataset file given: confirm the answers were made on oracle (longmemeval_oracle.json)"),
    ],
)
def test_same_variant_words(run, published, expected):
    assert lme.same_variant(run, published) == expected


# --- item 3: the output tokens a dry run prints are the ones it counts --------------------------


@pytest.mark.parametrize(("extra", "per_reply"), [((), 10), (("judge.max_tokens=200",), 60)])
def test_the_dry_run_counts_the_output_tokens_it_prints(typed_config, tmp_path, extra, per_reply):
    need_shared()
    cfg = typed_config("benchmark=longmemeval", "scorer=judge", "judge=gpt-4o", "judge.dry_run=true",
                       "judge.audit.n=0", "data=file", "tracking=none", f"data.path={HYPOTHESES}",
                       f"data.reference={REFERENCE}", *extra)
    estimate = run_longmemeval(cfg, tmp_path / "out", tmp_path).summary["judge"]["dry_run_estimate"]
    assert estimate["calls_to_make"] == 500
    assert estimate["estimated_output_tokens"] == 500 * per_reply  # LongMemEval caps replies at 10
    assert f"; {per_reply} output tokens per reply typical (the lower of 60 and judge.max_tokens=" \
        in estimate["assumptions"]
