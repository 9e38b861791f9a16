"""``overwrite=true`` replaces a finished run only once the new one has finished (issue 27 §3).

The new run is built in ``.locomo_exp-new/`` beside the old one and swapped in at the end
(``locomo_exp/report/run_swap.py``). A stop at any phase -- Ctrl-C (in plain code, at the
"about to make N calls" line, during the calls, swallowed by a finalizer), a full disk
(``OSError(ENOSPC)`` from a write), a crash in MLflow, a cut swap -- leaves every file of the
old run byte for byte, no stage litter, and one log line saying the old run was kept.
Before, the old outputs were removed as soon as the new input was valid.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from locomo_exp.experiment import run_experiment
from locomo_exp.report import run_swap
from locomo_exp.report.run_swap import MOVED_MARKER, OLD_DIR, STAGE_DIR, recover_cut_swap
from locomo_exp.results import interrupts

Composer = Callable[..., Any]


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def _enospc(*_: object, **__: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _StopAtLine(logging.Handler):
    """Raises ``KeyboardInterrupt`` when a record starting with ``prefix`` is logged: Ctrl-C there."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.prefix):
            raise KeyboardInterrupt


@pytest.fixture
def old_run(typed_config: Composer, tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A finished F1 run of the example (with its plots) in ``tmp_path/out``."""
    out = tmp_path / "out"
    run_experiment(typed_config("tracking=none"), out, tmp_path)
    return out, _files(out)


def _judged(fake_anthropic: Any, *extra: str) -> list[str]:
    return ["scorer=both", f"judge.base_url={fake_anthropic.url}", "judge.audit.n=0",
            "judge.progress=false", "judge.max_retries=0", "overwrite=true", *extra]


def _kept_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is kept as it was" in r.getMessage()]


def _interrupt_in_scoring(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    import locomo_exp.benchmarks.locomo.steps as experiment  # LoCoMo's job hooks

    def stop(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "score_lexical", stop)
    return KeyboardInterrupt


def _swallowed_interrupt(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    import locomo_exp.benchmarks.locomo.steps as experiment  # LoCoMo's job hooks

    real = experiment.score_lexical

    def swallowed(*args: Any, **kwargs: Any) -> Any:  # a finalizer ate the KeyboardInterrupt
        monkeypatch.setattr(interrupts, "_received", signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(experiment, "score_lexical", swallowed)
    return KeyboardInterrupt


def _disk_full_at_first_write(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    import locomo_exp.report.outputs as outputs

    monkeypatch.setattr(outputs, "atomic_write_jsonl", _enospc)
    return OSError


def _ctrl_c_at_about_to_make(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    handler = _StopAtLine("judge: about to make")
    logging.getLogger().addHandler(handler)
    return KeyboardInterrupt


def _sigint_during_the_calls(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    from fake_anthropic import rubric

    answered: list[int] = []

    def responder(request: Any) -> Any:
        answered.append(1)
        if len(answered) == 3:  # a real Ctrl-C while calls are in flight
            os.kill(os.getpid(), signal.SIGINT)
        return rubric(80)

    fake.responder = responder
    return KeyboardInterrupt


def _disk_full_at_last_write(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    import locomo_exp.benchmarks.locomo.steps as experiment  # LoCoMo's job hooks

    real = experiment.write_locomo_run

    def write(run: Any, output_dir: Any) -> Any:
        if run.summary.judge is not None:  # the write with the judge's verdicts
            _enospc()
        return real(run, output_dir)

    monkeypatch.setattr(experiment, "write_locomo_run", write)
    return OSError


def _crash_in_mlflow(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    from locomo_exp import tracking

    def crash(*_: object, **__: object) -> None:
        raise RuntimeError("artifact store went away")

    monkeypatch.setattr(tracking, "log_artifacts", crash)
    return RuntimeError


def _disk_full_mid_swap(monkeypatch: pytest.MonkeyPatch, fake: Any) -> type[BaseException]:
    real = os.replace
    seen: list[object] = []

    def replace(src: Any, dst: Any) -> None:
        if OLD_DIR in str(dst):
            seen.append(dst)
            if len(seen) == 2:  # the second old file on its way aside
                _enospc()
        real(src, dst)

    monkeypatch.setattr(run_swap.os, "replace", replace)
    return OSError


PHASES = [
    pytest.param(_interrupt_in_scoring, False, id="ctrl-c-while-scoring"),
    pytest.param(_swallowed_interrupt, False, id="ctrl-c-swallowed-by-a-finalizer"),
    pytest.param(_disk_full_at_first_write, False, id="disk-full-at-first-write"),
    pytest.param(_ctrl_c_at_about_to_make, False, id="ctrl-c-at-about-to-make-n-calls"),
    pytest.param(_sigint_during_the_calls, False, id="sigint-during-the-calls"),
    pytest.param(_disk_full_at_last_write, False, id="disk-full-at-last-write"),
    pytest.param(_crash_in_mlflow, True, id="crash-in-mlflow"),
    pytest.param(_disk_full_mid_swap, False, id="disk-full-mid-swap"),
]


@pytest.mark.parametrize(("inject", "tracked"), PHASES)
def test_a_stop_at_any_phase_leaves_the_old_run_exactly_as_it_was(
    inject: Callable[[pytest.MonkeyPatch, Any], type[BaseException]],
    tracked: bool,
    old_run: tuple[Path, dict[str, bytes]],
    typed_config: Composer,
    fake_anthropic: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    out, before = old_run
    cfg = typed_config(*_judged(fake_anthropic, "tracking=mlflow" if tracked else "tracking=none"))
    expected = inject(monkeypatch, fake_anthropic)
    caplog.set_level(logging.INFO)
    try:
        with pytest.raises(expected):
            run_experiment(cfg, out, tmp_path)
    finally:
        for handler in list(logging.getLogger().handlers):
            if isinstance(handler, _StopAtLine):
                logging.getLogger().removeHandler(handler)
        interrupts.forget()
    assert _files(out) == before  # every file, byte for byte; no stage or aside folder
    assert len(_kept_lines(caplog)) == 1
    assert _kept_lines(caplog)[0].endswith(f"the earlier run in {out} is kept as it was")


def test_a_finished_new_run_replaces_the_old_one(
    old_run: tuple[Path, dict[str, bytes]], typed_config: Composer, tmp_path: Path
) -> None:
    out, before = old_run
    assert "category_scores.png" in before
    result = run_experiment(typed_config("tracking=none", "overwrite=true", "f1=squad"), out, tmp_path)
    after = _files(out)
    assert json.loads(after["summary.json"])["versions"]["f1"] != json.loads(before["summary.json"])[
        "versions"]["f1"]
    assert set(after) == {p.name for p in result.files}  # nothing of the old run is left over
    assert all(p.parent == out and p.is_file() for p in result.files)
    assert not (out / STAGE_DIR).exists() and not (out / OLD_DIR).exists()


def test_a_failure_after_every_old_file_was_moved_aside_finishes_the_swap(
    old_run: tuple[Path, dict[str, bytes]], typed_config: Composer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    out, before = old_run
    real = os.replace
    failed: list[bool] = []

    def replace(src: Any, dst: Any) -> None:
        if Path(src).parent.name == STAGE_DIR and Path(dst).parent == out and not failed:
            failed.append(True)  # the first new file on its way up
            _enospc()
        real(src, dst)

    monkeypatch.setattr(run_swap.os, "replace", replace)
    with pytest.raises(OSError):
        run_experiment(typed_config("tracking=none", "overwrite=true", "f1=squad"), out, tmp_path)
    after = _files(out)
    assert "f1_squad" in after["summary.json"].decode() and set(after) <= set(before)
    assert not (out / STAGE_DIR).exists() and not (out / OLD_DIR).exists()
    assert _kept_lines(caplog) == []


def _cut_swap(out: Path, all_moved: bool) -> None:
    """The directory as a job killed in the middle of a swap leaves it."""
    (out / OLD_DIR).mkdir()
    (out / STAGE_DIR).mkdir()
    os.replace(out / "report.md", out / OLD_DIR / "report.md")
    (out / STAGE_DIR / "report.md").write_text("# new report\n")
    (out / STAGE_DIR / "summary.json").write_text('{"status": {"f1": "ok"}}')
    if all_moved:
        for name in ("summary.json", "scores.jsonl"):
            os.replace(out / name, out / OLD_DIR / name)
        (out / OLD_DIR / MOVED_MARKER).touch()
        os.replace(out / STAGE_DIR / "report.md", out / "report.md")


def test_a_swap_cut_by_kill_before_every_old_file_was_moved_is_undone(
    old_run: tuple[Path, dict[str, bytes]],
) -> None:
    out, before = old_run
    _cut_swap(out, all_moved=False)
    assert recover_cut_swap(out)
    assert _files(out) == before


def test_a_swap_cut_by_kill_after_every_old_file_was_moved_is_finished(
    old_run: tuple[Path, dict[str, bytes]],
) -> None:
    out, _ = old_run
    _cut_swap(out, all_moved=True)
    assert recover_cut_swap(out)
    assert (out / "report.md").read_text() == "# new report\n"
    assert (out / "summary.json").read_text() == '{"status": {"f1": "ok"}}'
    assert not (out / "scores.jsonl").exists()
    assert not (out / STAGE_DIR).exists() and not (out / OLD_DIR).exists()
