"""Scoring against a corrected answer key (issue 13, part 3).

Reads an answer-key audit in the format of the public LoCoMo audit's ``errors.json``
(dial481/locomo-audit; CC BY-NC 4.0 -- users pass their own copy, the project ships none):
a JSON list of ``{question_id, question, golden_answer, category, error_type,
correct_answer, ...}``. The audit's ids (``locomo_<conversation index>_qa<i>``) are its
own, so entries are matched to questions by conversation + normalised question text;
conversations are aligned by shared questions, because harnesses name them differently.

Entries whose ``error_type`` is ``WRONG_CITATION`` only fix evidence ids (the gold is
right); every other entry changes scores: its question's corrected gold is
``correct_answer``, or :data:`UNANSWERABLE` when that reads "unanswerable". The
*ceiling* of a category under the original key is the share of its questions not
affected by a score-changing entry -- what a perfect system could score.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import normalize_question
from locomo_exp.data.errata import UNANSWERABLE, ErrataEntry, ErrataError, load_errata
from locomo_exp.data.input_file import file_sha256
from locomo_exp.data.match import align_conversations
from locomo_exp.scoring.specs import LEXICAL_SPECS

logger = logging.getLogger(__name__)

# what a system answers when it abstains (LoCoMo's category-5 rule)
_ABSTAIN = ("no information available", "not mentioned")


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _references(item: Any) -> tuple[str, ...]:
    """A question's gold answers: each reference of a record, else its ``ground_truth``."""
    references = _field(item, "gold_references")
    return tuple(references) if references else (str(_field(item, "ground_truth")),)


@dataclass
class ErrataMatch:
    """Entries matched to questions.

    Attributes:
        by_index: question index (in the list given) -> its entry.
        unmatched: entries matching no question.
        n_score_changing: matched entries that change scores.
    """

    by_index: dict[int, ErrataEntry]
    unmatched: list[ErrataEntry] = field(default_factory=list)

    @property
    def n_matched(self) -> int:
        """Entries matched to a question."""
        return len(self.by_index)

    @property
    def n_score_changing(self) -> int:
        """Matched entries that change scores."""
        return sum(e.changes_score for e in self.by_index.values())


def match_errata(entries: Sequence[ErrataEntry], questions: Sequence[Any]) -> ErrataMatch:
    """Match audit entries to questions by conversation + normalised question text.

    Args:
        entries: from :func:`load_errata`.
        questions: ``scores.jsonl`` rows or records (mappings or objects with
            ``conversation_id``, ``question``).

    Returns:
        :class:`ErrataMatch`. The audit's conversation index is aligned with the
        questions' conversation ids by shared question texts; an entry whose question
        text appears in no aligned conversation is unmatched (logged with the count).
    """
    by_conv_q: dict[str, list[str]] = defaultdict(list)
    index: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, item in enumerate(questions):
        conv, text = (
            str(_field(item, "conversation_id")),
            normalize_question(_field(item, "question")),
        )
        by_conv_q[conv].append(text)
        index[(conv, text)].append(i)
    by_conv_e: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        by_conv_e[str(entry.conversation)].append(normalize_question(entry.question))
    conv_map = align_conversations(by_conv_q, by_conv_e)  # audit conversation -> question conv id
    result = ErrataMatch(by_index={})
    for entry in entries:
        mapped = conv_map.get(str(entry.conversation))
        candidates = (
            index.get((mapped, normalize_question(entry.question)), [])
            if mapped is not None
            else []
        )
        free = [i for i in candidates if i not in result.by_index]
        if not free:
            result.unmatched.append(entry)
            continue
        result.by_index[free[0]] = entry
    logger.info(
        "errata: %d of %d entries matched to questions (%d score-changing)",
        result.n_matched,
        len(entries),
        result.n_score_changing,
    )
    return result


def corrected_gold(questions: Sequence[Any], matched: ErrataMatch) -> list[str]:
    """The gold of every question under the corrected key.

    Args:
        questions: rows or records with ``ground_truth``.
        matched: from :func:`match_errata`.

    Returns:
        Per question: the corrected answer for score-changing entries, :data:`UNANSWERABLE`
        where the audit says so, else the original ``ground_truth`` (as ``str``).
    """
    out = []
    for i, item in enumerate(questions):
        entry = matched.by_index.get(i)
        out.append(
            entry.correct_answer
            if entry is not None and entry.changes_score
            else str(_field(item, "ground_truth"))
        )
    return out


def _groups(categories: Sequence[int]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(categories):
        groups[str(c)].append(i)
        if c in (1, 2, 3, 4):
            groups["overall_1_4"].append(i)
        groups["overall"].append(i)
    return dict(sorted(groups.items(), key=lambda kv: (not kv[0].isdigit(), kv[0])))


def ceilings(questions: Sequence[Any], matched: ErrataMatch) -> dict[str, dict[str, Any]]:
    """Per category the ceiling a perfect system reaches under the original key.

    Args:
        questions: rows or records with ``category``.
        matched: from :func:`match_errata`.

    Returns:
        group (``"1"``..``"5"``, ``"overall_1_4"``, ``"overall"``) ->
        ``{"n", "affected", "ceiling"}``; ``ceiling`` is in points (0-100):
        ``100 x (n - affected) / n`` where ``affected`` counts questions with a
        score-changing entry.
    """
    categories = [int(_field(q, "category")) for q in questions]
    out = {}
    for group, members in _groups(categories).items():
        affected = sum(
            1 for i in members if i in matched.by_index and matched.by_index[i].changes_score
        )
        out[group] = {
            "n": len(members),
            "affected": affected,
            "ceiling": 100.0 * (len(members) - affected) / len(members),
        }
    return out


def abstains(prediction: str) -> bool:
    """True when a prediction abstains (LoCoMo's category-5 phrases)."""
    text = str(prediction).casefold()
    return any(p in text for p in _ABSTAIN)


def score_both_keys(
    questions: Sequence[Any],
    matched: ErrataMatch,
    scorer: Callable[[str, str, int], float],
    scale: float = 100.0,
) -> dict[str, dict[str, Any]]:
    """Score every question against the original and the corrected key.

    Args:
        questions: rows or records with ``prediction``, ``ground_truth``, ``category``.
        matched: from :func:`match_errata`.
        scorer: ``(prediction, gold, category) -> score 0-1`` (e.g.
            ``locomo_exp.scoring.f1.locomo_f1``). A question with several golds
            (``gold_references``) scores its best gold, as the main table does; one the audit
            corrects scores against the corrected answer; one it marks unanswerable scores 1
            when the prediction abstains (LoCoMo's category-5 rule), else 0.
        scale: factor to the reported unit (100: points).

    Returns:
        group -> ``{"n", "original", "corrected", "ceiling", "above_ceiling"}``: means
        in points under each key, the original key's ceiling (:func:`ceilings`) and
        whether the original-key score exceeds it.
    """
    original, corrected = [], []
    for i, item in enumerate(questions):
        pred, cat = str(_field(item, "prediction")), int(_field(item, "category"))
        # several golds: the best one, as the main table scores (never their joined text)
        best = max(scorer(pred, gold, cat) for gold in _references(item))
        entry = matched.by_index.get(i)
        new = entry.correct_answer if entry is not None and entry.changes_score else None
        original.append(best)
        if new is None:
            corrected.append(best)
        else:
            corrected.append(
                (1.0 if abstains(pred) else 0.0) if new == UNANSWERABLE else scorer(pred, new, cat)
            )
    caps = ceilings(questions, matched)
    categories = [int(_field(q, "category")) for q in questions]
    out = {}
    for group, members in _groups(categories).items():
        orig = scale * sum(original[i] for i in members) / len(members)
        corr = scale * sum(corrected[i] for i in members) / len(members)
        ceiling = caps[group]["ceiling"] * scale / 100.0
        out[group] = {
            "n": len(members),
            "original": orig,
            "corrected": corr,
            "ceiling": ceiling,
            "above_ceiling": orig > ceiling + 1e-9,
        }
    return out


__all__ = [
    "UNANSWERABLE",
    "ErrataEntry",
    "ErrataError",
    "ErrataMatch",
    "abstains",
    "ceilings",
    "corrected_gold",
    "load_errata",
    "match_errata",
    "score_both_keys",
]


def score_errata(
    records: Sequence[Any], errata_path: Path, *, with_bleu1: bool = True
) -> dict[str, Any]:
    """Score every lexical metric against both keys, per category, with the ceilings.

    Args:
        records: the scored questions (``QARecord`` or rows with ``conversation_id``,
            ``question``, ``ground_truth``, ``prediction``, ``category``).
        errata_path: the audit file (:func:`locomo_exp.data.errata.load_errata`).
        with_bleu1: also score BLEU-1.

    Returns:
        The ``answer_key`` section of ``summary.json``: ``path``, ``sha256``,
        ``n_entries``, ``n_matched``, ``n_score_changing``, ``ceilings`` (group ->
        ``{n, affected, ceiling}``) and ``metrics``: metric (``f1_locomo``, ``f1_squad``,
        ``f1_mem0``, ``bleu1``) -> group -> ``{n, original, corrected, ceiling,
        above_ceiling}``, scores in points (0-100). A question whose prediction is missing
        scores 0 under both keys.

    Raises:
        locomo_exp.data.errata.ErrataError: the file is missing or malformed (one line).
    """
    entries = load_errata(errata_path)
    matched = match_errata(entries, records)
    missing = {i for i, r in enumerate(records) if getattr(r, "prediction_missing", False)}
    metrics: dict[str, Any] = {}
    for spec in LEXICAL_SPECS:
        if spec.kind != "f1" and not with_bleu1:
            continue

        def scorer(
            pred: str, gold: str, category: int, fn: Callable[..., float] = spec.function
        ) -> float:
            return float(fn(pred, gold, category))

        rows = [_Blank(r) if i in missing else r for i, r in enumerate(records)]
        metrics[spec.metric] = score_both_keys(rows, matched, scorer)
    logger.info("answer key: %d of %d errata entries matched", matched.n_matched, len(entries))
    return {
        "path": str(errata_path),
        "sha256": file_sha256(errata_path),
        "n_entries": len(entries),
        "n_matched": matched.n_matched,
        "n_score_changing": matched.n_score_changing,
        "ceilings": ceilings(records, matched),
        "metrics": metrics,
    }


class _Blank:
    """A record whose prediction is missing: scored with an empty prediction (0)."""

    def __init__(self, record: Any):
        self._record = record

    def __getattr__(self, name: str) -> Any:
        if name == "prediction":
            return ""
        return getattr(self._record, name)
