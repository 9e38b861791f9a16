"""The unified 2,387-item evaluation set, built as the authors' ``data/unified_input.py`` does.

LoCoMo's 1,986 questions (``locomo10.json``, each with its category string) then the 401
Cognitive items of ``locomo_plus.json``, Cognitive item ``i`` stitched into LoCoMo
conversation ``i % 10`` (deterministic; the authors' stand-alone ``build_conv.py`` picks one
at random instead). Its cue's ``A``/``B`` become that conversation's speakers, written
``Name：text`` (a full-width colon, as in the authors' own ``judged.json``): that is the
item's ``evidence``, what the judge compares the reply with. There is no gold answer.

What is not built here: the stitched conversation text (``input_prompt``), which an
answering system needs and a scorer does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import CATEGORY_OF_ID, COGNITIVE, RELATIONS
from locomo_exp.data.input_file import DataValidationError, RecordProblem, read_results_file

SPEAKER_SEPARATOR = "："
"""Between a speaker's name and the line in a Cognitive item's ``evidence`` (U+FF1A)."""


@dataclass(frozen=True)
class UnifiedItem:
    """One item of the unified set.

    Attributes:
        index: position in the set (0-based; LoCoMo questions first).
        category: ``multi-hop`` ... ``adversarial`` or ``Cognitive``.
        conversation: LoCoMo conversation index (0-9) the item belongs to.
        sample_id: that conversation's ``sample_id`` (``conv-26``...).
        question: the LoCoMo question, or the Cognitive trigger query as stored.
        ground_truth: LoCoMo's answer (``str``), ``""`` for Cognitive and adversarial items
            without one.
        evidence: the Cognitive cue with speaker names; ``""`` for LoCoMo questions.
        relation: the Cognitive relation type, ``None`` for LoCoMo questions.
        time_gap: the Cognitive item's ``time_gap`` phrase, ``None`` for LoCoMo questions.
    """

    index: int
    category: str
    conversation: int
    sample_id: str
    question: str
    ground_truth: str
    evidence: str = ""
    relation: str | None = None
    time_gap: str | None = None


def _problem(path: Path, where: str, field: str | None, message: str) -> DataValidationError:
    return DataValidationError([RecordProblem(str(path), where, field, message)])


def named_cue(cue: str, speaker_a: str, speaker_b: str, *, path: Path, where: str) -> str:
    r"""A cue dialogue with ``A:``/``B:`` replaced by the conversation's speaker names.

    Args:
        cue: ``"A: ...\nB: ..."``.
        speaker_a: the conversation's ``speaker_a``.
        speaker_b: its ``speaker_b``.
        path: the Cognitive file (for the error line).
        where: the item's location (for the error line).

    Returns:
        ``"<speaker_a>：...\n<speaker_b>：..."``.

    Raises:
        DataValidationError: a line that does not start with ``A:`` or ``B:``.
    """
    names = {"A": speaker_a, "B": speaker_b}
    lines = []
    for line in cue.split("\n"):
        speaker, sep, text = line.partition(":")
        if not sep or speaker.strip() not in names:
            raise _problem(path, where, "cue_dialogue", f"line {line[:40]!r} does not start "
                           "with 'A:' or 'B:'")
        lines.append(f"{names[speaker.strip()]}{SPEAKER_SEPARATOR}{text.strip()}")
    return "\n".join(lines)


def _locomo_items(locomo: Any, path: Path) -> tuple[list[UnifiedItem], list[tuple[str, str]]]:
    if not isinstance(locomo, list) or not locomo:
        raise _problem(path, "", None, "not LoCoMo's locomo10.json (a list of conversations)")
    items: list[UnifiedItem] = []
    speakers: list[tuple[str, str]] = []
    for conv_index, sample in enumerate(locomo):
        where = f"[{conv_index}]"
        try:
            conv = sample["conversation"]
            speakers.append((str(conv["speaker_a"]), str(conv["speaker_b"])))
            qas = list(sample["qa"])
        except (KeyError, TypeError):
            raise _problem(path, where, "conversation", "needs conversation.speaker_a, "
                           "conversation.speaker_b and qa") from None
        for qa_index, qa in enumerate(qas):
            category = qa.get("category") if isinstance(qa, dict) else None
            if category not in CATEGORY_OF_ID:
                raise _problem(path, f"{where}.qa[{qa_index}]", "category",
                               f"{category!r} is not a LoCoMo category (1-5)")
            answer = qa.get("answer")
            items.append(UnifiedItem(
                index=len(items), category=CATEGORY_OF_ID[category], conversation=conv_index,
                sample_id=str(sample.get("sample_id", conv_index)),
                question=str(qa.get("question", "")),
                ground_truth="" if answer is None else str(answer),
            ))
    return items, speakers


def build_unified(locomo_plus_path: Path, locomo10_path: Path) -> list[UnifiedItem]:
    """The unified LoCoMo-Plus set from the authors' Cognitive file and ``locomo10.json``.

    LoCoMo questions in file order (conversation by conversation), then Cognitive item ``i``
    of ``locomo_plus.json`` in conversation ``i % len(conversations)`` (10 for
    ``locomo10.json``), as the authors' ``unified_input.py`` places it.

    Args:
        locomo_plus_path: ``locomo_plus.json`` (a list of ``{relation_type, cue_dialogue,
            trigger_query, time_gap, ...}``).
        locomo10_path: LoCoMo's ``locomo10.json``.

    Returns:
        The items, LoCoMo's 1,986 first, then the Cognitive ones (2,387 for the real files).

    Raises:
        DataValidationError: a file that is not what it should be (one line: file, record,
            field).
    """
    locomo_items, speakers = _locomo_items(
        read_results_file(locomo10_path, "reference file").obj, locomo10_path)
    cognitive = read_results_file(locomo_plus_path, "Cognitive items file").obj
    if not isinstance(cognitive, list):
        raise _problem(locomo_plus_path, "", None, "not a list of Cognitive items")
    items = list(locomo_items)
    for i, raw in enumerate(cognitive):
        where = f"[{i}]"
        if not isinstance(raw, dict):
            raise _problem(locomo_plus_path, where, None, "not an object")
        for key in ("relation_type", "cue_dialogue", "trigger_query"):
            if not isinstance(raw.get(key), str):
                raise _problem(locomo_plus_path, where, key, "missing or not a string")
        if raw["relation_type"] not in RELATIONS:
            raise _problem(locomo_plus_path, where, "relation_type",
                           f"{raw['relation_type']!r} is not one of {', '.join(RELATIONS)}")
        conv = i % len(speakers)
        items.append(UnifiedItem(
            index=len(items), category=COGNITIVE, conversation=conv,
            sample_id=locomo_items_sample_id(locomo_items, conv),
            question=raw["trigger_query"], ground_truth="",
            evidence=named_cue(raw["cue_dialogue"], *speakers[conv], path=locomo_plus_path,
                               where=where),
            relation=raw["relation_type"],
            time_gap=str(raw.get("time_gap")) if raw.get("time_gap") is not None else None,
        ))
    return items


def locomo_items_sample_id(items: list[UnifiedItem], conversation: int) -> str:
    """The ``sample_id`` of a conversation, from its LoCoMo questions (its index if none)."""
    return next((it.sample_id for it in items if it.conversation == conversation),
                str(conversation))
