"""Progress: a tqdm bar of judge calls on a terminal, today's log lines otherwise."""

from __future__ import annotations

import io
import logging

import pytest

from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.llm.progress import ProgressReporter, format_seconds, make_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_calls_advance_a_tqdm_bar_and_no_lines_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    screen = Terminal()
    with caplog.at_level(logging.INFO, logger="locomo_exp.llm"):
        progress = ProgressReporter(4, 1, enabled=True, interval_s=0.0, stream=screen)
        progress.record(JudgeResult(score=80.0))
        progress.record(JudgeResult(score=None, outcome="parse_failure", error="bad"))
        progress.record_cached()
        assert progress.bar is not None and progress.bar.n == 4
        progress.bar.refresh()
        assert "judge" in screen.getvalue() and "4/4" in screen.getvalue()
        assert "parse_failures=1" in screen.getvalue()
        assert not [r for r in caplog.records if r.getMessage().startswith("judge 3/4")]
        progress.finish()


def test_without_a_terminal_progress_is_logged_as_lines(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="locomo_exp.llm"):
        progress = ProgressReporter(2, 0, enabled=True, interval_s=0.0, stream=io.StringIO())
        progress.record(JudgeResult(score=80.0))
    assert progress.bar is None
    assert caplog.records[0].getMessage().startswith("judge 1/2 (50.0%)")


def test_progress_off_gives_no_bar_even_on_a_terminal() -> None:
    assert make_bar(5, initial=0, desc="judge", unit="call", enabled=False, stream=Terminal()) is None


def test_durations_are_shown_as_hours_minutes_seconds() -> None:
    assert format_seconds(3725.4) == "1:02:05"
    assert format_seconds(-3) == "0:00:00"
