"""A LongMemEval judge dry run names the panel members and counts the audit's and the
panel's calls: the real run then makes exactly the calls the dry run counted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_anthropic import FakeAnthropicServer, judged_item, text
from lme_helpers import dataset_item, write_json, write_jsonl

from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.benchmarks.longmemeval.report import console_table

TYPES = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")


def _cfg(typed_config: Any, server: FakeAnthropicServer, tmp_path: Path, *extra: str) -> Any:
    items = [dataset_item(f"q{i}", TYPES[i % 4], answer=f"answer {i}") for i in range(8)]
    ref = write_json(tmp_path / "ref.json", items)
    hyp = write_jsonl(tmp_path / "h.jsonl",
                      [{"question_id": f"q{i}", "hypothesis": f"it is answer {i}"} for i in range(8)])
    return typed_config(
        "data=file", "tracking=none", "benchmark=longmemeval", "scorer=judge",
        f"data.path={hyp}", f"data.reference={ref}", f"judge.base_url={server.url}",
        "judge.progress=false", "judge.audit.n=2", "judge.panel=[sonnet-4-6,haiku-4-5]",
        "judge.audit.max_share=null",  # 8 answers: the 25% cap would leave no control
        *extra,
    )


def test_the_dry_run_names_the_panel_and_counts_the_calls_the_real_run_makes(
    typed_config: Any, tmp_path: Path, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.responder = lambda request: text(
        "yes" if judged_item(request).prediction == judged_item(request).gold else "no"
    )
    dry = run_longmemeval(_cfg(typed_config, fake_anthropic, tmp_path, "judge.dry_run=true"),
                          tmp_path / "dry", tmp_path).summary
    assert fake_anthropic.messages_requests() == []
    estimate = dry["judge"]["dry_run_estimate"]
    at = fake_anthropic.url.rstrip("/")
    assert estimate["panel_members"] == (
        f"anthropic claude-sonnet-4-6 at {at}; anthropic claude-haiku-4-5 at {at}"
    )
    # answers 8, controls 3 kinds x 2, haiku 8 (sonnet's panel calls are the answers')
    assert (estimate["calls_to_make"], estimate["audit_calls_to_make"],
            estimate["panel_calls_to_make"], estimate["total_calls_to_make"]) == (8, 6, 8, 22)
    assert estimate["total_estimated_cost_usd"] == round(
        estimate["estimated_cost_usd"] + estimate["audit_estimated_cost_usd"]
        + run_longmemeval(  # haiku alone: its own estimate
            _cfg(typed_config, fake_anthropic, tmp_path, "judge.dry_run=true", "judge=haiku-4-5",
                 "judge.audit.n=0", "judge.panel=[]"),
            tmp_path / "haiku", tmp_path,
        ).summary["judge"]["dry_run_estimate"]["estimated_cost_usd"],
        6,
    )
    assert f"  panel_members: anthropic claude-sonnet-4-6 at {at}; anthropic claude-haiku-4-5" \
        f" at {at}" in console_table(dry).splitlines()

    real = run_longmemeval(_cfg(typed_config, fake_anthropic, tmp_path), tmp_path / "real",
                           tmp_path).summary
    assert [m["preset"] for m in real["panel"]] == ["sonnet-4-6", "haiku-4-5"]
    assert len(fake_anthropic.messages_requests()) == estimate["total_calls_to_make"]
