"""The scale of every score a run writes, named in the files themselves.

Lexical metrics (F1 variants, BLEU-1) are kept on 0-1, as the scorers they reproduce
compute them (LoCoMo's ``evaluation.py``, the Mem0 harness); J -- this run's judge and the
verdicts stored in an input file -- is on 0-100, as published J figures are. Another
benchmark's figures keep its authors' scale (its plug-in's ``scales`` map). Existing scales
are never changed (``mode=compare`` reads older summaries); :func:`locomo_scales` says which
is which, as ``summary.json`` and ``card.json`` → ``scales`` (docs/formats.md, "Scales").
"""

from __future__ import annotations

from collections.abc import Iterable

SHARE = "0-1"
"""A score or share between 0 and 1."""

PERCENT = "0-100"
"""A score in percent."""


def locomo_scales(
    lexical: Iterable[str], *, stored_judge: bool, judge: bool
) -> dict[str, str]:
    """The ``scales`` map of a LoCoMo run: each metric of ``summary.json`` and its scale.

    Args:
        lexical: names of the lexical metrics the run computed (``summary["metrics"]`` keys:
            ``f1``, ``f1_locomo``, ..., ``bleu1``), each on 0-1.
        stored_judge: whether the input carried another judge's verdicts
            (``summary["stored_judge"]``, ``scores.jsonl`` ``stored_judge_score``; 0-100).
        judge: whether this run's judge ran (``summary["judge"]["j"]``, ``scores.jsonl``
            ``j_mean``; 0-100).

    Returns:
        ``{"f1": "0-1", ..., "stored_judge": "0-100", "j": "0-100"}``: metric name -> scale,
        lexical metrics first in the order given. Bootstrap intervals
        (``analysis.bootstrap.<metric>``) are on their metric's scale.
    """
    scales = {name: SHARE for name in lexical}
    if stored_judge:
        scales["stored_judge"] = PERCENT
    if judge:
        scales["j"] = PERCENT
    return scales


__all__ = ["PERCENT", "SHARE", "locomo_scales"]
