"""LLM-as-a-Judge J score with Claude: N runs per question, concurrent, cached, resumable.

Public API:

* :func:`preflight_judge` - validate a judge job before any call.
* :func:`run_judge` - judge all records; returns a :class:`JudgeRunResult`.
* :func:`get_protocol` - a protocol's spec; ``get_protocol(name).build_prompt(...)`` is the
  prompt of one call.
* :class:`JudgeError` (a ``ValueError``), :class:`JudgeFatalAPIError` (a ``JudgeError``).
* :class:`CallsStop` - set by another thread to stop new calls; the job then raises
  :class:`CallsStopped` (a ``JudgeError``) with the calls made and left.
* :class:`JudgeBatchPending` - ``judge.mode=batch judge.batch.wait=false``: batches
  submitted and still processing (not an error; the same command later collects).

Modules: :mod:`.protocols` (versioned prompts and reply rules, one module each),
:mod:`.parsing` (reply parsing), :mod:`.calls` (call specs, and :class:`~.calls.VerdictReader`
that turns replies into results for the runtime), :mod:`.preflight` (checks before spending),
:mod:`.estimate` (what the calls will cost, the spend cap), :mod:`.job` (run_judge, dry run),
:mod:`.aggregate` (J, spreads, counts). The calls themselves (providers, cache, pool, batch,
retries, :class:`CallsStop`) are the LLM runtime's, :mod:`locomo_exp.llm`, which knows no
verdicts; the errors and the stop signal the judge's callers handle are re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from locomo_exp.judge.aggregate import JudgeAggregation, JudgeResult, JudgeRunResult
from locomo_exp.judge.parsing import PARSER_VERSION, parse_judge_reply
from locomo_exp.judge.preflight import preflight_judge
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.judge.protocols.binary import PROMPT_VERSION as BINARY_PROMPT_VERSION
from locomo_exp.judge.protocols.rubric import PROMPT_VERSION as RUBRIC_PROMPT_VERSION
from locomo_exp.llm.errors import (
    JudgeBatchPending,
    JudgeCallError,
    JudgeError,
    JudgeFatalAPIError,
)
from locomo_exp.llm.stop import CallsStop, CallsStopped

_LAZY = {"run_judge": "job"}
"""Loaded on first use: :mod:`.job` pulls in ``anthropic`` (~1 s), which F1-only runs never need."""


if TYPE_CHECKING:
    from locomo_exp.judge.job import run_judge


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"locomo_exp.judge.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BINARY_PROMPT_VERSION",
    "PARSER_VERSION",
    "RUBRIC_PROMPT_VERSION",
    "CallsStop",
    "CallsStopped",
    "JudgeAggregation",
    "JudgeBatchPending",
    "JudgeCallError",
    "JudgeError",
    "JudgeFatalAPIError",
    "JudgeResult",
    "JudgeRunResult",
    "get_protocol",
    "parse_judge_reply",
    "preflight_judge",
    "run_judge",
]
