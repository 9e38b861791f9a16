"""A LongMemEval judge run states its own calls' tokens and cost and those "in all".

As a LoCoMo run does (``tests/judge/test_resume_accounting.py``): what this run paid, and the
same work counting the calls answered from the judge cache at the usage the cache stored
with their replies, in ``summary.json`` and in the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropicServer, text
from lme_helpers import dataset_item, write_json, write_jsonl

from locomo_exp.benchmarks.longmemeval.job import run_longmemeval

TYPES = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")


def _run(typed_config: Any, server: FakeAnthropicServer, tmp_path: Path, n: int) -> Any:
    ref = write_json(tmp_path / "ref.json",
                     [dataset_item(f"q{i}", TYPES[i % 4], answer=f"answer {i}") for i in range(8)])
    hyp = write_jsonl(tmp_path / f"h{n}.jsonl",
                      [{"question_id": f"q{i}", "hypothesis": f"it is answer {i}"} for i in range(n)])
    cfg = typed_config(
        "data=file", "tracking=none", "benchmark=longmemeval", "scorer=judge",
        f"data.path={hyp}", f"data.reference={ref}", f"judge.base_url={server.url}",
        "judge.progress=false", "judge.audit.n=0",
    )
    return run_longmemeval(cfg, tmp_path / f"run{n}", tmp_path)


def test_a_run_partly_from_the_cache_shows_this_runs_figures_and_those_in_all(
    typed_config: Any, tmp_path: Path, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.responder = lambda request: text("yes")
    first = _run(typed_config, fake_anthropic, tmp_path, 4)  # q0-q3 paid
    second = _run(typed_config, fake_anthropic, tmp_path, 8)  # q0-q3 cached, q4-q7 paid
    a, b = (r.summary["judge"]["settings"] for r in (first, second))
    assert (a["counts"]["calls_made"], b["counts"]["calls_made"], b["counts"]["cache_hits"]) == (4, 4, 4)
    # in all: the second run's work is the first run's calls plus its own
    assert b["estimated_cost_usd_including_cached"] == pytest.approx(
        a["estimated_cost_usd"] + b["estimated_cost_usd"], abs=1e-6
    )
    assert (b["tokens"]["cached_input"], b["tokens"]["cached_output"]) == (
        a["tokens"]["input"], a["tokens"]["output"]
    )
    report = (tmp_path / "run8" / "report.md").read_text()
    tokens = b["tokens"]
    line = (
        f"Judge calls: 4 made, 4 from the cache. Tokens: {tokens['input']} in, "
        f"{tokens['output']} out (this run); in all, with 4 cached call(s): "
        f"{tokens['input'] + a['tokens']['input']} in, {tokens['output'] + a['tokens']['output']} "
        f"out; cost ${b['estimated_cost_usd']:.4f} (answers ${b['estimated_cost_usd']:.4f}): "
        "list-price estimate of the calls made (custom endpoint judge.base_url: the model's list "
        "price may not apply); cached calls are free. In all, with the calls answered from the cache (at the usage stored with "
        f"their replies): ${b['estimated_cost_usd_including_cached']:.4f}."
    )
    assert line in report.splitlines()
    # a run with nothing cached says this run's figures only, as a LoCoMo run does
    only = (tmp_path / "run4" / "report.md").read_text()
    assert (
        f"Judge calls: 4 made, 0 from the cache. Tokens: {a['tokens']['input']} in, "
        f"{a['tokens']['output']} out (this run); cost ${a['estimated_cost_usd']:.4f} (answers "
        f"${a['estimated_cost_usd']:.4f}): list-price estimate of the calls made (custom endpoint "
        "judge.base_url: the model's list price may not apply); cached calls are free."
    ) in only.splitlines()
