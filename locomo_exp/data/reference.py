"""``data.reference=locomo10.json``: check every question against LoCoMo's own dataset.

Questions are matched on conversation + normalised question text (the benchmark's one
normaliser, :func:`locomo_exp.benchmark.locomo.normalize_question`: NFKC, case folded,
punctuation to spaces, whitespace collapsed). A file's conversation ids (``"0"``,
``locomo_experiment_user_0``, ``conv-26``...) are mapped to the dataset's ``sample_id``
by where most of their questions are found. The check counts matched and unmatched
questions, gives categories to records that lack them, and counts records whose
category differs from the dataset's; a warning is logged when questions differ (e.g. a
file that renamed a speaker).

A question the dataset holds twice in one conversation under two categories (``What did
Gina receive from a dance contest?`` is in ``conv-30`` as category 4 and as category 5)
takes the category of the item whose gold answer is the record's (``answer``, or the
``adversarial_answer`` LoCoMo's category-5 items keep instead). When the gold answers
are the same too, and the file has no other category-5 question (a file of categories
1-4, as the Mem0 and Zep harnesses write), category 5 is ruled out and the choice is
counted in :attr:`ReferenceCheck.categories_without_5`; otherwise the record is
reported as ambiguous.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import normalize_question
from locomo_exp.data.input_file import (
    DataValidationError,
    RecordProblem,
    file_error,
    read_results_file,
)
from locomo_exp.results import QARecord
from locomo_exp.results.words import counted

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
        categories_without_5: of those, records whose question is in the dataset under
            category 5 and another with the same gold answer, given the other because the
            file has no category-5 question.
        category_differs: matched records whose category is not the dataset's.
        conversations: file conversation id -> dataset ``sample_id``.
        sha256: hex digest of the dataset file's bytes (recorded in the run's card).
    """

    path: str
    matched: int = 0
    unmatched: int = 0
    unmatched_examples: list[str] = field(default_factory=list)
    categories_from_reference: int = 0
    categories_without_5: int = 0
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
        DataValidationError: when the file cannot be read or is not such a list (one line
            naming the file, the first sample that is not ``{sample_id, qa}`` and the field).
    """

    def __init__(self, path: str | Path):
        parsed = read_results_file(path, "reference file")
        self.path = str(parsed.path)
        self.sha256 = parsed.sha256
        samples = parsed.obj
        expected = "data.reference must be LoCoMo's dataset: a JSON list of {sample_id, qa}"
        if not isinstance(samples, list):
            raise file_error(parsed.path, expected)
        for index, sample in enumerate(samples):
            if not isinstance(sample, dict) or not isinstance(sample.get("qa"), list):
                field_name = "qa" if isinstance(sample, dict) else None
                what = "is not a list" if field_name else "is not an object"
                where = parsed.where(index)
                if isinstance(sample, dict) and "sample_id" in sample:
                    where += f" (sample_id={sample['sample_id']})"
                raise DataValidationError(
                    [RecordProblem(str(parsed.path), where, field_name, f"{what}; {expected}")]
                )
        self._items: dict[tuple[str, str], list[tuple[int, frozenset[str]]]] = defaultdict(list)
        self._samples_of: dict[str, set[str]] = defaultdict(set)
        for index, sample in enumerate(samples):
            sample_id = str(sample.get("sample_id", index))
            for qa in sample["qa"]:
                if isinstance(qa, dict) and isinstance(qa.get("question"), str):
                    key = normalize_question(qa["question"])
                    if isinstance(qa.get("category"), int):
                        golds = frozenset(
                            normalize_question(qa[name])
                            for name in ("answer", "adversarial_answer")
                            if isinstance(qa.get(name), (str, int, float))
                        )
                        self._items[(sample_id, key)].append((qa["category"], golds))
                    self._samples_of[key].add(sample_id)
        self.conversations: dict[str, str] = {}
        self._file_has_5 = True

    def prepare(self, items: Iterable[tuple[str | None, str, str | None]]) -> dict[str, str]:
        """Map the file's conversations and see whether the file has category-5 questions.

        Each file conversation id goes to the sample holding most of its questions. The
        file "has category 5" unless none of its questions resolves to category 5 alone
        (by question, then gold answer) while at least one resolves to another category.

        Args:
            items: ``(conversation id, question, gold answer or None)`` of the file's records.

        Returns:
            conversation id -> ``sample_id`` (also kept in :attr:`conversations`).
        """
        items = list(items)
        votes: dict[str, Counter[str]] = defaultdict(Counter)
        for conversation, question, _ in items:
            if conversation is not None:
                votes[conversation].update(self._samples_of.get(normalize_question(question), ()))
        self.conversations = {
            conv: count.most_common(1)[0][0] for conv, count in votes.items() if count
        }
        resolved: set[int] = set()
        for conversation, question, gold in items:
            categories = {c for c, _ in self._candidates(conversation, question, gold)}
            if len(categories) == 1:
                resolved |= categories
        self._file_has_5 = 5 in resolved or not resolved
        return self.conversations

    def _sample(self, conversation: str | None, key: str) -> str | None:
        """The sample a question belongs to: its mapped conversation, or a unique match."""
        samples = self._samples_of.get(key, set())
        if conversation is not None and conversation in self.conversations:
            sample = self.conversations[conversation]
            return sample if sample in samples else None
        return next(iter(samples)) if len(samples) == 1 else None

    def _matches(self, conversation: str | None, question: str) -> list[tuple[int, frozenset[str]]]:
        """The dataset's items (category, gold answers) with this conversation and question."""
        key = normalize_question(question)
        sample = self._sample(conversation, key)
        return self._items.get((sample, key), []) if sample is not None else []

    def _candidates(
        self, conversation: str | None, question: str, gold: str | None
    ) -> list[tuple[int, frozenset[str]]]:
        """:meth:`_matches`, narrowed to those with the record's gold answer when any has it."""
        matches = self._matches(conversation, question)
        if gold is not None and len({c for c, _ in matches}) > 1:
            same_gold = [m for m in matches if normalize_question(gold) in m[1]]
            return same_gold or matches
        return matches

    def category(
        self, conversation: str | None, question: str, gold: str | None = None
    ) -> int | None:
        """The dataset's category of a question, or ``None`` if it is not in the dataset.

        Used as the category of records that have none. Several categories are narrowed
        by the gold answer, then, in a file without category-5 questions, by ruling out 5
        (see the module).

        Args:
            conversation: the record's conversation id in the file, if any.
            question: the record's question.
            gold: the record's gold answer as text, if it has one.

        Raises:
            ValueError: when the dataset holds the question under several categories and
                neither rule settles it (the message names them).
        """
        candidates = self._candidates(conversation, question, gold)
        categories = sorted({c for c, _ in candidates})
        if not categories:
            return None
        if len(categories) > 1 and not self._file_has_5 and len(set(categories) - {5}) == 1:
            categories = sorted(set(categories) - {5})
        if len(categories) > 1:
            key = normalize_question(gold) if gold is not None else None
            same = (
                f" and the same gold answer {gold!r}"
                if key is not None and all(key in golds for _, golds in candidates)
                else ""
            )
            raise ValueError(
                f"{len(candidates)} records in data.reference ({self.path}) match this "
                f"conversation and question{same}, with categories "
                f"{' and '.join(map(str, categories))}; give the record its category, or take "
                "the categories from another file of the same questions with "
                "data.categories_from=<file>"
            )
        return categories[0]

    def check(self, records: list[QARecord], taken: Collection[str] = ()) -> ReferenceCheck:
        """Count matched / unmatched records and category differences; log a warning if any differ.

        Args:
            records: the loaded records.
            taken: question ids of the records that had no category and took the dataset's.

        Returns:
            :class:`ReferenceCheck`.
        """
        result = ReferenceCheck(
            self.path,
            sha256=self.sha256,
            conversations=dict(self.conversations),
        )
        for record in records:
            matches = self._matches(record.conversation_id, record.question)
            if not matches:
                result.unmatched += 1
                if len(result.unmatched_examples) < MAX_EXAMPLES:
                    result.unmatched_examples.append(f"{record.question_id}: {record.question}")
                continue
            result.matched += 1
            if record.question_id in taken:
                result.categories_from_reference += 1
                candidates = self._candidates(
                    record.conversation_id, record.question, record.ground_truth
                )
                if len({c for c, _ in candidates}) > 1:  # settled by ruling out category 5
                    result.categories_without_5 += 1
            if record.category not in {c for c, _ in matches}:
                result.category_differs += 1
        if result.categories_without_5:
            n = result.categories_without_5
            log.warning(
                "%s %s in %s under category 5 and another with the same gold answer; given "
                "the other, as the file has no category-5 question",
                counted(n, "question"),
                "is" if n == 1 else "are",
                self.path,
            )
        if result.unmatched or result.category_differs:
            log.warning(
                "%d of %s not found in %s (matched on conversation + normalised "
                "question text), %d with another category; first unmatched: %s",
                result.unmatched,
                counted(len(records), "question"),
                self.path,
                result.category_differs,
                "; ".join(result.unmatched_examples[:3]) or "none",
            )
        return result
