"""LongMemEval runs in batch mode (``judge.mode=batch``) against the fake Message Batches API
(LongMemEval sweeps: tests/benchmarks/longmemeval/test_lme_sweep.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import judged_item, text
from lme_helpers import dataset_item, write_json, write_jsonl

from locomo_exp.benchmarks.longmemeval.job import run_longmemeval

TYPES = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")
BATCH = ("judge.mode=batch", "judge.batch.poll_interval_s=0.01", "judge.batch.max_poll_interval_s=0.01")


def _files(tmp_path: Path) -> tuple[Path, Path]:
    """8 questions, 2 per type; the hypothesis is right ("good") for even ids."""
    items = [dataset_item(f"q{i}", TYPES[i % 4], answer=f"answer {i}") for i in range(8)]
    ref = write_json(tmp_path / "ref.json", items)
    hyp = write_jsonl(
        tmp_path / "h.jsonl",
        [{"question_id": f"q{i}", "hypothesis": "good" if i % 2 == 0 else "bad"} for i in range(8)],
    )
    return ref, hyp


def _cfg(typed_config: Any, fake_anthropic: Any, tmp_path: Path, *extra: str) -> Any:
    ref, hyp = _files(tmp_path)
    return typed_config(
        "data=file", "tracking=none", "benchmark=longmemeval", "scorer=judge",
        f"data.path={hyp}", f"data.reference={ref}", f"judge.base_url={fake_anthropic.url}",
        "judge.progress=false", "judge.audit.n=0", *BATCH, *extra,
    )


def test_batch_mode_gives_the_realtime_figures_and_a_second_run_pays_nothing(
    typed_config, tmp_path, fake_anthropic
):
    fake_anthropic.responder = lambda r: text("yes" if judged_item(r).prediction == "good" else "no")
    cfg = _cfg(typed_config, fake_anthropic, tmp_path)
    result = run_longmemeval(cfg, tmp_path / "out", tmp_path)

    figures = result.summary["headline"]["figures"]
    assert figures["overall"]["accuracy"] == 0.5 and figures["overall"]["n"] == 8
    settings = result.summary["judge"]["settings"]
    assert settings["mode"] == "batch"
    assert fake_anthropic.batch_requests_submitted() == 7  # the canary went realtime
    assert len(fake_anthropic.messages_requests()) == 1
    rows = [json.loads(line) for line in (tmp_path / "out" / "scores.jsonl").open()]
    assert sorted(r["question_id"] for r in rows if r["j_mean"] == 100.0) == ["q0", "q2", "q4", "q6"]

    fake_anthropic.clear()
    again = run_longmemeval(cfg, tmp_path / "out2", tmp_path)
    assert fake_anthropic.requests == []  # every verdict from the cache
    assert again.summary["headline"]["figures"]["overall"]["accuracy"] == 0.5


def test_wait_false_writes_nothing_and_the_same_command_collects(
    typed_config, tmp_path, fake_anthropic
):
    """As every pipeline benchmark: a pending batch is not a run, so nothing claims one (the
    earlier job wrote a summary saying ``pending``; issue 26 moved LongMemEval onto the
    pipeline, which writes only a finished run)."""
    from locomo_exp.judge import JudgeBatchPending

    fake_anthropic.responder = lambda r: text("yes" if judged_item(r).prediction == "good" else "no")
    fake_anthropic.batch_processing_s = 3600.0  # still processing until end_batches()
    cfg = _cfg(typed_config, fake_anthropic, tmp_path, "judge.batch.wait=false")
    out = tmp_path / "out"
    with pytest.raises(JudgeBatchPending) as info:
        run_longmemeval(cfg, out, tmp_path)
    assert info.value.batch_ids  # the batches the same command collects
    assert not (out / "summary.json").exists()  # nothing claims a run
    submitted = fake_anthropic.batch_requests_submitted()
    assert submitted == 7

    fake_anthropic.end_batches()
    result = run_longmemeval(cfg, out, tmp_path)  # the same command: resumed, not refused
    assert result.summary["status"]["judge"] == "ok"
    assert result.summary["headline"]["figures"]["overall"]["accuracy"] == 0.5
    assert fake_anthropic.batch_requests_submitted() == submitted  # nothing submitted again


def test_the_command_line_says_the_batches_are_pending_and_exits_0(
    typed_config, tmp_path, fake_anthropic, capsys
):
    from locomo_exp.benchmarks.longmemeval import PLUGIN
    from locomo_exp.cli.jobs import run_plugin_from_cli

    fake_anthropic.responder = lambda r: text("yes")
    fake_anthropic.batch_processing_s = 3600.0
    cfg = _cfg(typed_config, fake_anthropic, tmp_path, "judge.batch.wait=false")
    run_plugin_from_cli(PLUGIN, cfg, tmp_path / "out", tmp_path)  # no SystemExit: status 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"No outputs yet (no J yet): {tmp_path / 'out'}"
    assert len(printed) > 1 and "batch" in printed[1].lower()
    assert not (tmp_path / "out" / "summary.json").exists()
    fake_anthropic.end_batches()
