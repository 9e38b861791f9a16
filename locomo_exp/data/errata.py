"""Reading an answer-key audit (``data.errata``): the entries of an ``errors.json``.

The format is the public LoCoMo audit's ``errors.json`` (dial481/locomo-audit; CC BY-NC 4.0
-- users pass their own copy, the project ships none): a JSON list of ``{question_id,
question, golden_answer, category, error_type, correct_answer, ...}``. Scoring against the
corrected key is :mod:`locomo_exp.scoring.errata`; its report section
:mod:`locomo_exp.report.errata`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

UNANSWERABLE = "unanswerable"
NON_SCORING_TYPES = frozenset({"WRONG_CITATION"})
_AUDIT_ID = re.compile(r"^locomo_(\d+)_qa(\d+)$")
_REQUIRED = ("question_id", "question", "error_type", "correct_answer")


class ErrataError(ValueError):
    """An errata file that cannot be used; the message names the file, entry and field."""


@dataclass(frozen=True)
class ErrataEntry:
    """One audit entry.

    Attributes:
        question_id: the audit's id (``locomo_<conv>_qa<i>``).
        conversation: the conversation index parsed from the id (``None`` if another form).
        question: the question text.
        golden_answer: the original gold (as the audit quotes it).
        category: the category the audit lists (``None`` if absent).
        error_type: e.g. ``HALLUCINATION``, ``WRONG_CITATION``.
        correct_answer: the corrected answer, or :data:`UNANSWERABLE`.
    """

    question_id: str
    conversation: int | None
    question: str
    golden_answer: str | None
    category: int | None
    error_type: str
    correct_answer: str

    @property
    def changes_score(self) -> bool:
        """True unless the entry only fixes evidence citations."""
        return self.error_type.upper() not in NON_SCORING_TYPES


def load_errata(path: str | Path) -> list[ErrataEntry]:
    """Read and validate an errata file.

    Args:
        path: the JSON file (a list of audit entries).

    Returns:
        The entries, in file order.

    Raises:
        ErrataError: one line naming the file, the entry index and the field, when the
            file is missing or not JSON, not a list, or an entry lacks a required field
            (``question_id``, ``question``, ``error_type``, ``correct_answer``).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ErrataError(f"{path}: errata file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ErrataError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(data, list):
        raise ErrataError(
            f"{path}: expected a JSON list of audit entries, got {type(data).__name__}"
        )
    entries = []
    for i, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise ErrataError(f"{path}: entry {i}: expected an object")
        for name in _REQUIRED:
            if raw.get(name) is None or str(raw.get(name)).strip() == "":
                raise ErrataError(
                    f"{path}: entry {i} ({raw.get('question_id', '?')}): field '{name}' missing"
                )
        qid = str(raw["question_id"])
        found = _AUDIT_ID.match(qid)
        answer = str(raw["correct_answer"]).strip()
        category = raw.get("category")
        entries.append(
            ErrataEntry(
                question_id=qid,
                conversation=int(found.group(1)) if found else None,
                question=str(raw["question"]),
                golden_answer=None
                if raw.get("golden_answer") is None
                else str(raw["golden_answer"]),
                category=int(category)
                if isinstance(category, (int, str)) and str(category).isdigit()
                else None,
                error_type=str(raw["error_type"]),
                correct_answer=UNANSWERABLE
                if answer.casefold().startswith(UNANSWERABLE)
                else answer,
            )
        )
    return entries
