"""LongMemEval's answer rows as a ``data.format`` value: read by the LongMemEval job.

``data.format=longmemeval`` names LongMemEval's layout (``{question_id, hypothesis}`` rows,
:mod:`.lme_answers`); the LongMemEval job (``benchmark=longmemeval``) reads it, so LoCoMo's
loading refuses it in one line instead of reading it as LoCoMo answers.
"""

from __future__ import annotations

from locomo_exp.data.layout_spec import Candidate, Layout, LayoutSpec


def _refuse(candidate: Candidate) -> Layout:
    raise ValueError(
        "data.format=longmemeval is read by the LongMemEval job (benchmark=longmemeval), "
        "not as a LoCoMo layout"
    )


LAYOUT = LayoutSpec(
    name="longmemeval",
    scope="file",
    looks_for="LongMemEval rows {question_id, hypothesis}",
    # detected by the LongMemEval job (longmemeval_job.is_longmemeval), never by LoCoMo loading
    matches=lambda candidate: False,
    build=_refuse,
    benchmark="longmemeval",
)
"""The ``longmemeval`` layout (read by :mod:`locomo_exp.longmemeval_job`)."""
