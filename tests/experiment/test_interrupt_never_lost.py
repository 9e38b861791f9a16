"""A Ctrl-C always stops the job (trial 4, finding 2).

2 of about 20 interrupts of an F1-only job printed ``Exception ignored in: <function
WeakKeyDictionary.__init__.<locals>.remove ...> ... KeyboardInterrupt`` and the job went
on to exit 0 with its MLflow run FINISHED: the ``KeyboardInterrupt`` was raised inside a
weak reference's callback, where Python prints and drops exceptions. The tests deliver
SIGINT with ``signal.raise_signal`` from inside such a callback (no sleeps, no timing).
"""

from __future__ import annotations

import signal
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Composer, mlflow_runs, run_python

from locomo_exp.experiment import run_experiment
from locomo_exp.results import interrupts


@pytest.fixture
def installed() -> Iterator[None]:
    """The job's handlers, as ``python -m locomo_exp`` installs them; pytest's back after."""
    previous = {sig: signal.getsignal(sig) for sig in interrupts.HANDLED_SIGNALS}
    hook = sys.unraisablehook
    interrupts.forget()
    interrupts.install()
    yield
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    sys.unraisablehook = hook
    interrupts.forget()


def interrupt_inside_a_finalizer() -> None:
    """SIGINT delivered while a weak reference's callback runs (as in the trial)."""

    class Anything:
        pass

    thing = Anything()
    keep = weakref.ref(thing, lambda _: signal.raise_signal(signal.SIGINT))
    del thing  # the callback runs here; its exception cannot propagate
    assert keep() is None


def test_an_interrupt_swallowed_in_a_finalizer_is_recorded_silently(
    installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    interrupt_inside_a_finalizer()  # returns: the interrupt was swallowed
    assert interrupts.received() == signal.SIGINT
    assert capsys.readouterr().err == ""  # no "Exception ignored in" traceback
    with pytest.raises(interrupts.Interrupted) as stop:
        interrupts.raise_if_received()
    assert stop.value.signum == signal.SIGINT


def test_an_interrupt_in_plain_code_raises_at_once_and_is_recorded(installed: None) -> None:
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGTERM)
    assert interrupts.received() == signal.SIGTERM


def test_other_unraisable_errors_are_still_printed(installed: None, capsys: pytest.CaptureFixture[str]) -> None:
    class Broken:
        def __del__(self) -> None:
            raise RuntimeError("from a finalizer")

    Broken()
    assert "RuntimeError: from a finalizer" in capsys.readouterr().err
    assert interrupts.received() is None


def test_a_job_that_saw_a_swallowed_interrupt_ends_killed_with_no_outputs(
    installed: None, tmp_path: Path, typed_config: Composer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import locomo_exp.benchmarks.locomo.steps as experiment  # LoCoMo's job hooks

    real = experiment.score_lexical

    def scored_then_interrupted(*args: Any, **kwargs: Any) -> Any:
        interrupt_inside_a_finalizer()
        return real(*args, **kwargs)

    monkeypatch.setattr(experiment, "score_lexical", scored_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(typed_config("tracking.experiment=e"), tmp_path / "out", tmp_path)
    assert not (tmp_path / "out" / "summary.json").exists()  # the same command resumes
    (run,) = mlflow_runs(tmp_path, "e")
    assert run.info.status == "KILLED"


SCRIPT = """
import runpy, signal, sys, weakref
import locomo_exp.benchmarks.locomo.steps as experiment  # LoCoMo's job hooks

real = experiment.score_lexical

def scored_then_interrupted(*args, **kwargs):
    class Anything:
        pass
    thing = Anything()
    keep = weakref.ref(thing, lambda _: signal.raise_signal(signal.SIGINT))
    del thing
    return real(*args, **kwargs)

experiment.score_lexical = scored_then_interrupted
sys.argv = ["locomo_exp", "hydra.run.dir=out", "tracking.experiment=e"]
runpy.run_module("locomo_exp", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_cli_interrupted_in_a_finalizer_exits_130_killed_in_one_line(tmp_path: Path) -> None:
    done = run_python(SCRIPT, tmp_path)
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines() == ["interrupted; re-run the same command to resume"]
    assert "Scored" not in done.stdout
    (run,) = mlflow_runs(tmp_path, "e")
    assert run.info.status == "KILLED"
    assert not (tmp_path / "out" / "summary.json").exists()
