"""``overwrite=true`` on a LongMemEval run replaces the earlier run only once the new one ended.

The LongMemEval job builds the new run beside the earlier one (``.locomo_exp-new/``) and
swaps it in at the end, as the LoCoMo job does (``locomo_exp/report/run_swap.py``; issue 26,
"a finished run is never lost"). Before, ``prepare_output_dir`` removed the earlier outputs
as soon as the new input was valid, so a failure mid-run left neither run.
"""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from lme_helpers import dataset_item, write_json, write_jsonl

import locomo_exp.benchmarks.longmemeval.report as lme_report
from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.report.run_swap import STAGE_DIR

KINDS = ("single-session-user", "multi-session", "temporal-reasoning")


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def _inputs(tmp_path: Path, labels: list[bool]) -> tuple[Path, Path]:
    items = [dataset_item(f"q{i}", KINDS[i % 3]) for i in range(len(labels))]
    reference = write_json(tmp_path / "reference.json", items)
    rows = [{"question_id": f"q{i}", "hypothesis": f"answer {i}",
             "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": label}}
            for i, label in enumerate(labels)]
    answers = write_jsonl(tmp_path / "answers.eval-results-gpt-4o", rows)
    return answers, reference


def _config(typed_config: Any, answers: Path, reference: Path, *extra: str) -> Any:
    return typed_config("data=file", "tracking=none", f"data.path={answers}",
                        f"data.reference={reference}", *extra)


@pytest.fixture
def old_run(typed_config: Any, tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A finished LongMemEval run (stored verdicts, 6 questions, 4 correct) in ``out``."""
    answers, reference = _inputs(tmp_path, [True, True, False, True, False, True])
    out = tmp_path / "out"
    result = run_longmemeval(_config(typed_config, answers, reference), out, tmp_path)
    assert result.summary["headline"]["figures"]["overall"]["accuracy"] == pytest.approx(4 / 6)
    return out, _files(out)


def test_a_failure_mid_run_keeps_the_earlier_run_byte_for_byte(
    typed_config: Any, tmp_path: Path, old_run: tuple[Path, dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    out, before = old_run
    assert {"report.md", "summary.json", "scores.jsonl", "card.json"} <= set(before)
    answers, reference = _inputs(tmp_path, [False] * 6)  # a new, different run
    calls = []

    def full_disk(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(lme_report, "render_lme_report", full_disk)  # mid-run: after scores.jsonl
    with caplog.at_level(logging.WARNING), pytest.raises(OSError, match="No space left"):
        run_longmemeval(_config(typed_config, answers, reference, "overwrite=true"), out, tmp_path)
    assert calls  # the new run got as far as writing its report
    assert _files(out) == before  # every file of the earlier run, byte for byte
    assert not (out / STAGE_DIR).exists()
    kept = [r.getMessage() for r in caplog.records if "is kept as it was" in r.getMessage()]
    assert len(kept) == 1 and "No space left" in kept[0]


def test_an_interrupt_mid_run_keeps_the_earlier_run(
    typed_config: Any, tmp_path: Path, old_run: tuple[Path, dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, before = old_run
    answers, reference = _inputs(tmp_path, [False] * 6)

    def ctrl_c(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(lme_report, "render_lme_report", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        run_longmemeval(_config(typed_config, answers, reference, "overwrite=true"), out, tmp_path)
    assert _files(out) == before
    assert not (out / STAGE_DIR).exists()


def test_a_finished_new_run_replaces_the_earlier_one(
    typed_config: Any, tmp_path: Path, old_run: tuple[Path, dict[str, bytes]],
) -> None:
    out, before = old_run
    answers, reference = _inputs(tmp_path, [False] * 6)
    result = run_longmemeval(_config(typed_config, answers, reference, "overwrite=true"), out,
                             tmp_path)
    assert result.summary["headline"]["figures"]["overall"]["accuracy"] == 0.0
    assert (result.output_dir / "report.md") == out / "report.md" and (result.output_dir / "report.md").is_file()
    assert all(path.parent == out and path.is_file() for path in result.files)
    assert _files(out)["summary.json"] != before["summary.json"]
    assert not (out / STAGE_DIR).exists()


def test_without_overwrite_a_finished_run_is_refused_and_kept(
    typed_config: Any, tmp_path: Path, old_run: tuple[Path, dict[str, bytes]],
) -> None:
    # the replace decision once skipped the check when overwrite was false (a short-circuit)
    from locomo_exp.report.run_dir import OutputDirInUse

    out, before = old_run
    answers, reference = _inputs(tmp_path, [False] * 6)
    with pytest.raises(OutputDirInUse, match="already holds a run"):
        run_longmemeval(_config(typed_config, answers, reference), out, tmp_path)
    assert _files(out) == before


def test_a_failed_judge_writes_nothing_and_keeps_the_earlier_run(
    typed_config: Any, tmp_path: Path, old_run: tuple[Path, dict[str, bytes]],
    fake_anthropic: Any,
) -> None:
    """Every reply a refusal with no text: no valid verdict, so the judge failed; since the port onto the pipeline (issue 26) nothing is written, not even a
    summary saying so, and the earlier run stays byte for byte."""
    from fake_server import Reply

    out, before = old_run
    answers, reference = _inputs(tmp_path, [False] * 6)
    fake_anthropic.responder = lambda request: Reply(text=None, stop_reason="refusal")
    cfg = _config(typed_config, answers, reference, "overwrite=true", "benchmark=longmemeval",
                  "scorer=judge", f"judge.base_url={fake_anthropic.url}", "judge.progress=false",
                  "judge.audit.n=0", "judge.max_error_rate=1.0")
    with pytest.raises(ValueError) as failed:
        run_longmemeval(cfg, out, tmp_path)
    line = str(failed.value)
    assert line.startswith("judge failed: no valid judge verdict: ") and "\n" not in line
    assert f"nothing written (completed calls are cached; an earlier run in {out} stays" in line
    prompts = [r.prompt for r in fake_anthropic.messages_requests()]
    assert len(prompts) == 12 and len(set(prompts)) == 6  # each answer asked again once
    assert _files(out) == before and not (out / STAGE_DIR).exists()
