"""``data.reference=locomo10.json``: check every question against LoCoMo's own dataset.

Questions are matched on conversation + normalised question text (the benchmark's one
normaliser, :func:`locomo_exp.benchmark.locomo.normalize_question`: NFKC, case folded,
punctuation to spaces, whitespace collapsed). A file's conversation ids (``"0"``,
``locomo_experiment_user_0``, ``conv-26``...) are mapped to the dataset's ``sample_id``
by where most of their questions are found. The check counts matched and unmatched
questions, gives categories to records that lack them, and counts records whose
category differs from the dataset's; a warning is logged when questions differ (e.g. a
file that renamed a speaker).
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import normalize_question
from locomo_exp.data.input_file import file_error, read_results_file
from locomo_exp.results import QARecord

log = logging.getLogger(__name__)

MAX_EXAMPLES = 5


@dataclass
class ReferenceCheck:
    """What :meth:`Reference.check` found (stored in ``LoadedResults.reference``).

    Attributes:
        path: the dataset file.
        matched: records found in the dataset.
        unmatched: records not found.
        unmatched_examples: up to 5 ``"<question id>: <question>"`` not found.
        categories_from_reference: records that had no category and took the dataset's.
        category_differs: matched records whose category is not the dataset's.
        conversations: file conversation id -> dataset ``sample_id``.
        sha256: hex digest of the dataset file's bytes (recorded in the run's card).
    """

    path: str
    matched: int = 0
    unmatched: int = 0
    unmatched_examples: list[str] = field(default_factory=list)
    categories_from_reference: int = 0
    category_differs: int = 0
    conversations: dict[str, str] = field(default_factory=dict)
    sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields for ``summary.json``."""
        return dict(self.__dict__)


class Reference:
    """LoCoMo's dataset (``locomo10.json``) indexed by sample and normalised question.

    Args:
        path: the dataset file (a JSON list of ``{sample_id, qa: [{question, category, ...}]}``).

    Raises:
        DataValidationError: when the file cannot be read or is not such a list.
    """

    def __init__(self, path: str | Path):
        parsed = read_results_file(path)
        self.path = str(parsed.path)
        self.sha256 = parsed.sha256
        samples = parsed.obj
        if not isinstance(samples, list) or not all(
            isinstance(s, dict) and isinstance(s.get("qa"), list) for s in samples
        ):
            raise file_error(
                parsed.path,
                "data.reference must be LoCoMo's dataset: a JSON list of {sample_id, qa}",
            )
        self._categories: dict[tuple[str, str], set[int]] = defaultdict(set)
        self._samples_of: dict[str, set[str]] = defaultdict(set)
        for index, sample in enumerate(samples):
            sample_id = str(sample.get("sample_id", index))
            for qa in sample["qa"]:
                if isinstance(qa, dict) and isinstance(qa.get("question"), str):
                    key = normalize_question(qa["question"])
                    if isinstance(qa.get("category"), int):
                        self._categories[(sample_id, key)].add(qa["category"])
                    self._samples_of[key].add(sample_id)
        self.conversations: dict[str, str] = {}
        self.categories_given = 0

    def map_conversations(self, pairs: Iterable[tuple[str | None, str]]) -> dict[str, str]:
        """Map each file conversation id to the sample holding most of its questions.

        Args:
            pairs: ``(conversation id, question)`` of the file's records.

        Returns:
            conversation id -> ``sample_id`` (also kept in :attr:`conversations`).
        """
        votes: dict[str, Counter[str]] = defaultdict(Counter)
        for conversation, question in pairs:
            if conversation is not None:
                votes[conversation].update(self._samples_of.get(normalize_question(question), ()))
        self.conversations = {
            conv: count.most_common(1)[0][0] for conv, count in votes.items() if count
        }
        return self.conversations

    def _sample(self, conversation: str | None, key: str) -> str | None:
        """The sample a question belongs to: its mapped conversation, or a unique match."""
        samples = self._samples_of.get(key, set())
        if conversation is not None and conversation in self.conversations:
            sample = self.conversations[conversation]
            return sample if sample in samples else None
        return next(iter(samples)) if len(samples) == 1 else None

    def category(self, conversation: str | None, question: str) -> int | None:
        """The dataset's category of a question, or ``None`` if unmatched or ambiguous.

        Used as the category of records that have none (counted in
        :attr:`categories_given`).
        """
        key = normalize_question(question)
        sample = self._sample(conversation, key)
        found = self._categories.get((sample, key), set()) if sample is not None else set()
        if len(found) != 1:
            return None
        self.categories_given += 1
        return next(iter(found))

    def check(self, records: list[QARecord]) -> ReferenceCheck:
        """Count matched / unmatched records and category differences; log a warning if any differ.

        Args:
            records: the loaded records.

        Returns:
            :class:`ReferenceCheck`.
        """
        result = ReferenceCheck(
            self.path,
            sha256=self.sha256,
            conversations=dict(self.conversations),
            categories_from_reference=self.categories_given,
        )
        for record in records:
            key = normalize_question(record.question)
            sample = self._sample(record.conversation_id, key)
            if sample is None:
                result.unmatched += 1
                if len(result.unmatched_examples) < MAX_EXAMPLES:
                    result.unmatched_examples.append(f"{record.question_id}: {record.question}")
                continue
            result.matched += 1
            if record.category not in self._categories.get((sample, key), {record.category}):
                result.category_differs += 1
        if result.unmatched or result.category_differs:
            log.warning(
                "%d of %d question(s) not found in %s (matched on conversation + normalised "
                "question text), %d with another category; first unmatched: %s",
                result.unmatched,
                len(records),
                self.path,
                result.category_differs,
                "; ".join(result.unmatched_examples[:3]) or "none",
            )
        return result
