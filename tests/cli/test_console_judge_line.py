"""The console says which judge produced J and what its calls cost (trial 5 #8, #14)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer

from locomo_exp.experiment import run_experiment
from locomo_exp.report.console import console_table
from locomo_exp.results import RunSummary


def test_the_j_column_names_its_judge_and_the_cost_under_the_table(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    typed_config,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake")
    cfg = typed_config(
        "scorer=both", "data=example", "tracking=none", "judge.runs=2",
        "judge.temperature=0.5", f"judge.base_url={fake_anthropic.url}",
        f"judge.cache_path={tmp_path}/cache.sqlite", "judge.progress=false",
    )
    summary = run_experiment(cfg, tmp_path / "out", tmp_path).summary
    lines = console_table(summary).splitlines()
    judge = summary["judge"]
    total = judge["trust"]["total_cost_usd"]
    assert total is not None and total > 0
    assert (
        f"J: judge anthropic claude-sonnet-4-6, protocol rubric (prompt "
        f"{judge['prompt_version']}), temperature 0.5, 2 run(s) per question, endpoint "
        f"{fake_anthropic.url} (custom)"
    ) in lines
    (cost,) = [line for line in lines if line.startswith("Judge cost ")]
    assert cost.startswith(f"Judge cost ${total:.4f} (answers ${judge['estimated_cost_usd']:.4f}")
    assert cost.endswith(
        "list-price estimate of the calls made (custom endpoint judge.base_url: the model's "
        "list price may not apply); cached calls are free.")
    report = (tmp_path / "out" / "report.md").read_text()
    assert "calls actually paid" not in report.split("## Judge reliability")[0].split("Tokens:")[-1]

    template = copy.deepcopy(summary)  # a template run names its template, not a prompt
    template["judge"].update(protocol="template", endpoint_kind="default", template={
        "name": "mem0-judge-my-copy", "version": "1", "sha256": "ab" * 32})
    text = console_table(RunSummary.from_json(template))
    assert "protocol template mem0-judge-my-copy@1 (sha256 abababababab), temperature" in text
    assert "calls actually paid, at the model's list price; cached calls are free." in text
