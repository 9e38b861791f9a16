"""Per-kind protocols: one prompt text per kind of question, chosen by the benchmark's own key.

A benchmark plug-in whose judge asks a different question for each kind of question (its
question types, categories or abilities) gives a :class:`KindProtocol`: its kinds, as the
benchmark's own strings, in a fixed order, and one function that renders the prompt of a kind.
The prompt of a record is chosen by the record's string kind
(:attr:`~locomo_exp.results.QARecord.kind`, else its ``question_type``), never by a number; the
verdict is read by the protocol's :class:`~.shape.VerdictShape`.

The judge engine groups, filters (``judge.categories``) and keys its cache by an integer, the
record's ``category``. For a record of a per-kind protocol that integer is the kind's **engine
id**, given by the protocol: its 1-based position in :attr:`KindProtocol.kinds`
(:meth:`KindProtocol.kind_id`). It is a position, not a LoCoMo category; it is what the judge
cache keys of these protocols have always held (the keys written before kinds travelled as
strings are hit), so the order of ``kinds`` is fixed once verdicts are cached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from locomo_exp.judge.protocols.base import ProtocolSpec

if TYPE_CHECKING:
    from locomo_exp.results import QARecord

KindPrompt = Callable[[str, "str | None", str, str], str]
"""``(question, ground_truth, prediction, kind) -> user prompt``."""


def _no_prompt(question: str, ground_truth: str | None, prediction: str, kind: str) -> str:
    raise NotImplementedError("a KindProtocol is built with its render function")


@dataclass(frozen=True)
class KindProtocol(ProtocolSpec):
    """A protocol with one prompt text per kind of question, keyed by the benchmark's strings.

    Attributes:
        kinds: the kinds it judges, as the benchmark's own keys, in a fixed order (the
            position is the kind's engine id: see the module docstring).
        render: ``(question, ground_truth, prediction, kind) -> prompt``.
    """

    kinds: tuple[str, ...] = ()
    render: KindPrompt = _no_prompt

    @property
    def kind_ids(self) -> dict[int, str]:
        """Engine id -> kind: ``{1: kinds[0], 2: kinds[1], ...}``."""
        return {index + 1: kind for index, kind in enumerate(self.kinds)}

    def kind_id(self, kind: str) -> int:
        """The engine id of a kind (its 1-based position in :attr:`kinds`).

        Raises:
            ValueError: a kind this protocol does not judge (names the protocol and its kinds).
        """
        if kind not in self.kinds:
            raise ValueError(
                f"protocol {self.name}: no kind {kind!r} (kinds: {', '.join(self.kinds)})"
            )
        return self.kinds.index(kind) + 1

    def kind_of(self, record: QARecord) -> str | None:
        """The record's kind among :attr:`kinds`: its ``kind``, else its ``question_type``.

        Returns:
            The kind, or ``None`` when neither is one this protocol judges.
        """
        for kind in (record.kind, record.question_type):
            if kind is not None and kind in self.kinds:
                return kind
        return None

    def build_prompt(
        self, question: str, ground_truth: str | None, predicted_answer: str, category: int
    ) -> str:
        """The prompt of the kind whose engine id is ``category`` (callers without a record).

        Raises:
            ValueError: an id that is no kind's.
        """
        kind = self.kind_ids.get(category)
        if kind is None:
            raise ValueError(f"protocol {self.name}: no kind has engine id {category}")
        return self.render(question, ground_truth, predicted_answer, kind)

    def build_record_prompt(self, record: QARecord) -> str:
        """The prompt of the record's own kind (:meth:`kind_of`).

        Raises:
            ValueError: a record with no kind this protocol judges (the preflight refuses such
                records first: :meth:`record_problems`).
        """
        kind = self.kind_of(record)
        if kind is None:
            raise ValueError(self._no_kind(record))
        return self.render(record.question, record.ground_truth, record.prediction, kind)

    def record_problems(self, records: list[QARecord]) -> list[str]:
        """One line for the records with no kind this protocol judges (the first one named).

        Returns:
            ``["protocol P: record Q has kind 'x', not one of ... (N record(s))"]`` or ``[]``.
        """
        lacking = [record for record in records if self.kind_of(record) is None]
        if not lacking:
            return []
        return [f"{self._no_kind(lacking[0])} ({len(lacking)} record(s))"]

    def _no_kind(self, record: QARecord) -> str:
        shown = record.kind or record.question_type
        return (
            f"protocol {self.name}: record {record.question_id} has kind {shown!r}, not one of "
            f"{', '.join(self.kinds)}"
        )


__all__ = ["KindPrompt", "KindProtocol"]
