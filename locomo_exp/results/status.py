"""The judge's line in ``summary["status"]``: while it runs, and when it did not finish."""

from __future__ import annotations

JUDGE_RUNNING = "running: not finished (the job stopped before the judge ended)"
"""``summary["status"]["judge"]`` while the judge runs; stays if the process is killed."""


def judge_status(error: BaseException) -> str:
    """The ``summary["status"]["judge"]`` text for a judge that did not finish.

    Args:
        error: what stopped the judge. An exception with a ``run_status`` attribute
            (e.g. ``"interrupted"``) gives that text; ``KeyboardInterrupt`` gives
            ``"interrupted"``; a pending batch gives ``"pending: <message>"``.

    Returns:
        ``"interrupted"``, ``"pending: ..."`` or ``"failed: <message>"``.
    """
    given = getattr(error, "run_status", None)
    if isinstance(given, str) and given:
        return given
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    message = str(error).strip() or type(error).__name__
    if type(error).__name__ == "JudgeBatchPending":
        return f"pending: {message}"
    return f"failed: {message}"


__all__ = ["JUDGE_RUNNING", "judge_status"]
