"""``scorer=both`` on LoCoMo-Plus: LoCoMo's token F1 on the factual items, beside J per category.

The answers file is made up here (seven items); the real LoCoMo-Plus files have no licence
and are never copied. Every F1 below is worked by hand from LoCoMo's official rules
(snap-research/LoCoMo ``task_eval/evaluation.py``: lower case, punctuation and the words
a/an/the/and removed, Porter stems, token F1; multi-hop split at commas; adversarial 1 when
the reply says "not mentioned"), not by calling the scorer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FAKE_OPENAI_KEY, FakeOpenAIServer
from fake_server import RecordedRequest, Reply

from locomo_exp.benchmarks.locomo_plus.job import run_locomo_plus

ITEMS: list[dict[str, Any]] = [
    # tokens {oslo, lima} both sides ("and" and "." dropped): F1 1
    {"category": "multi-hop", "question_input": "Which two cities did Ana visit?",
     "ground_truth": "Oslo and Lima", "prediction": "Oslo and Lima.", "conversation": 0},
    # {in, may, 2023} vs {may, 2023}: P 2/3, R 1, F1 0.8
    {"category": "temporal", "question_input": "When did Ben move?",
     "ground_truth": "May 2023", "prediction": "In May 2023.", "conversation": 1},
    # {no} vs {probabl, not}: nothing shared, F1 0
    {"category": "common-sense", "question_input": "Would Ana like a cold trip?",
     "ground_truth": "Probably not", "prediction": "No.", "conversation": 2},
    # {rex, dog} vs {rex}: P 1/2, R 1, F1 2/3
    {"category": "single-hop", "question_input": "What is Ben's dog called?",
     "ground_truth": "Rex", "prediction": "Rex the dog", "conversation": 0},
    {"category": "single-hop", "question_input": "What is Ana's dog called?",
     "ground_truth": "Fido", "prediction": "Fido", "conversation": 1},
    # no gold answer: the phrase "not mentioned" gives 1
    {"category": "adversarial", "question_input": "What is Ana's cat called?",
     "ground_truth": "", "prediction": "That was not mentioned.", "conversation": 1},
    {"category": "Cognitive", "question_input": "Ana: Any ideas for my weekend?",
     "evidence": "Ana：I hurt my knee last week.\nBen：Take care of it.", "ground_truth": "",
     "prediction": "Maybe something gentle, given your knee.", "conversation": 2,
     "relation_type": "state"},
]
F1_BY_CATEGORY = {"multi-hop": 1.0, "temporal": 0.8, "common-sense": 0.0,
                  "single-hop": (2 / 3 + 1.0) / 2, "adversarial": 1.0}
PER_ITEM = [1.0, 0.8, 0.0, 2 / 3, 1.0, 1.0, None]


def _reply(request: RecordedRequest) -> Reply:
    wrong = request.prompt.startswith(("Kind of item: temporal", "Kind of item: common-sense"))
    return Reply(text=json.dumps({"label": "wrong" if wrong else "correct", "reason": "x"}))


@pytest.fixture
def run(typed_config: Any, fake_openai: FakeOpenAIServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    fake_openai.responder = _reply

    def _run(*overrides: str, items: list[dict[str, Any]] = ITEMS, out: str = "out") -> Any:
        answers = tmp_path / f"{out}.json"
        answers.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
        cfg = typed_config(
            "benchmark=locomo_plus", "data=file", f"data.path={answers}",
            "tracking.enabled=false", f"judge.base_url={fake_openai.base_url}",
            f"judge.cache_path={tmp_path}/cache.sqlite", "judge.progress=false",
            "report.bootstrap_samples=50", *overrides,
        )
        return run_locomo_plus(cfg, tmp_path / out, tmp_path)

    return _run


def test_both_scores_factual_f1_beside_j_and_no_f1_for_cognitive(
    run: Any, fake_openai: FakeOpenAIServer
) -> None:
    result = run("scorer=both")
    assert len(fake_openai.messages_requests()) == len(ITEMS)  # the judge's calls, no more
    f1 = result.summary["f1"]
    assert f1["variant"] == "locomo" and f1["version"].startswith("locomo-official-f1/")
    assert {cat: g["mean"] for cat, g in f1["by_category"].items()} == {
        cat: round(v, 4) for cat, v in F1_BY_CATEGORY.items()}
    assert f1["by_category"]["single-hop"]["n"] == 2 and f1["n_items"] == 6
    assert "Cognitive" not in f1["by_category"]
    # unweighted: each category once; item-weighted: every factual item once
    assert f1["factual"]["unweighted"] == round(sum(F1_BY_CATEGORY.values()) / 5, 4) == 0.7267
    factual = [s for s in PER_ITEM if s is not None]
    assert f1["factual"]["item_weighted"] == round(sum(factual) / 6, 4) == 0.7444
    assert f1["cognitive"].startswith("1 Cognitive items: no gold answer")

    rows = [json.loads(line) for line in
            (result.output_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["f1_locomo"] for r in rows] == pytest.approx(PER_ITEM)
    assert rows[-1]["f1_locomo"] is None and "no gold answer" in rows[-1]["f1_unscored"]
    assert all(r["f1_unscored"] is None for r in rows[:-1])

    # J of the same items: temporal and common-sense judged wrong, the rest correct
    ours = result.summary["readings"]["ours"]
    assert ours["by_category"]["temporal"]["mean"] == 0.0
    assert ours["by_category"]["single-hop"]["mean"] == 1.0
    assert "  single-hop: J 1.0000 (100.0%), F1 0.8333 (83.3%) (n=2)" in result.console
    assert "  temporal: J 0.0000 (0.0%), F1 0.8000 (80.0%) (n=1)" in result.console
    assert "  Cognitive: J 1.0000 (100.0%), F1 no gold answer (n=1)" in result.console
    report = (result.output_dir / "report.md").read_text(encoding="utf-8")
    assert "| single-hop | 2 | 1.0000 (100.0%) | 0.8333 (83.3%) |" in report
    assert "| Cognitive | 1 | 1.0000 (100.0%) | no gold answer |" in report
    assert "| factual, item-weighted | 6 | 0.6667 (66.7%) | 0.7444 (74.4%) |" in report

    assert result.metrics["f1_locomo/category/single-hop"] == 83.33
    assert result.metrics["f1_locomo/factual_unweighted"] == 72.67
    assert result.metrics["f1_locomo/factual_item_weighted"] == 74.44
    card = json.loads((result.output_dir / "card.json").read_text(encoding="utf-8"))
    assert card["f1"]["variant"] == "locomo"
    assert card["f1"]["factual"] == {"unweighted": 0.7267, "item_weighted": 0.7444}
    page = (result.output_dir / "questions.html").read_text(encoding="utf-8")
    assert "f1_locomo" in page
    log = result.summary["run_log"]
    assert log["spec"]["scorer"] == "both"
    assert log["metrics"]["f1_locomo"]["groups"]["overall"] == {
        "n": 6, "value": 0.7444, "ci_low": None, "ci_high": None}


def test_another_variant_is_the_users_choice(run: Any) -> None:
    f1 = run("scorer=both", "f1=squad").summary["f1"]
    assert f1["variant"] == "squad"
    # SQuAD's rule has no multi-answer split and no stemming: {oslo, lima} still match
    assert f1["by_category"]["multi-hop"]["mean"] == 1.0


def test_scorer_judge_has_no_f1(run: Any) -> None:
    result = run("scorer=judge")
    assert "f1" not in result.summary
    assert not any(line.startswith("F1 beside J") for line in result.console)
    assert "f1_locomo" not in (result.output_dir / "scores.jsonl").read_text(encoding="utf-8")


def test_a_factual_item_without_gold_is_one_line_before_any_call(
    run: Any, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    items = [dict(item) for item in ITEMS]
    items[3]["ground_truth"] = "  "
    with pytest.raises(ValueError) as refused:
        run("scorer=both", items=items, out="bad")
    assert str(refused.value) == (
        f"{tmp_path / 'bad.json'}: record [3]: field 'ground_truth': empty on a single-hop "
        "item: scorer=both scores its F1 against it (use scorer=judge for the judge alone). "
        "Fix the file; no item was scored.")
    assert fake_openai.messages_requests() == []
    assert not any(p.is_file() for p in (tmp_path / "bad").rglob("*"))  # nothing written


def test_a_dry_run_pays_nothing_and_already_has_the_f1(
    run: Any, fake_openai: FakeOpenAIServer
) -> None:
    result = run("scorer=both", "judge.dry_run=true")
    assert fake_openai.requests == []
    assert result.summary["judge"]["dry_run"]["calls_to_make"] == len(ITEMS)
    assert result.summary["f1"]["factual"]["item_weighted"] == 0.7444  # no call needed
    assert "  single-hop: J not measured, F1 0.8333 (83.3%) (n=2)" in result.console
