"""The judge prompts of one job, each built once: the preflight's checks, then the calls.

A job builds each judged record's user prompt in its preflight (the prompt-size checks,
:func:`~locomo_exp.judge.preflight.preflight_judge`) and needs the same text again for its
call specs (:func:`~locomo_exp.judge.job.run_judge`). A :class:`PromptBook` made once per
job (:func:`locomo_exp.benchmarks.pipeline.preflight`) and handed to both keeps each prompt
built the first time, keyed by the protocol object and the whole record, so a prompt is
reused only for the same protocol and the same record (every field): the bytes sent are
those :meth:`~locomo_exp.judge.protocols.ProtocolSpec.build_record_prompt` gives.
"""

from __future__ import annotations

from locomo_exp.judge.protocols import ProtocolSpec
from locomo_exp.results import QARecord


class PromptBook:
    """User prompts built for one job, by protocol and record (not thread-safe; one job).

    Protocols are told apart by identity (a spec holds unhashable fields); each is kept
    referenced, so its id is never reused for another one while the book lives.
    """

    def __init__(self) -> None:
        self._books: dict[int, tuple[ProtocolSpec, dict[QARecord, str]]] = {}
        self.built = 0
        """Prompts built through this book (a test reads it: each built once)."""

    def prompt(self, spec: ProtocolSpec, record: QARecord) -> str:
        """The user prompt of ``record`` under ``spec``, built on first request.

        Args:
            spec: the protocol (``protocol_spec(cfg)``).
            record: the judged record (frozen; compared by every field).

        Returns:
            ``spec.build_record_prompt(record)``, the same string on every later request.

        Raises:
            ValueError: as ``build_record_prompt`` (e.g. a kind a template has no text for);
                nothing is kept then.
        """
        entry = self._books.get(id(spec))
        if entry is None or entry[0] is not spec:
            entry = self._books[id(spec)] = (spec, {})
        known = entry[1].get(record)
        if known is None:
            known = spec.build_record_prompt(record)
            entry[1][record] = known
            self.built += 1
        return known


__all__ = ["PromptBook"]
