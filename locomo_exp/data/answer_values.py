"""Reading one value of a results file: gold answers, predictions, stored judge verdicts.

Each function takes a value as ``json`` parsed it and returns what the scorers see, or
raises ``TypeError``/``ValueError`` with a short message that :mod:`locomo_exp.data`
attaches to the file, the record and the field.

* Gold: text or a number (as text, :func:`_number_text`: ``12.0`` reads ``"12"``), or a JSON
  list of them -- several acceptable answers, each a reference. Null, empty or blank text, an
  empty list and NaN/Infinity mean *no gold*: the question cannot be scored.
* Prediction: text or a number. Null, NaN and +-Infinity (Python's ``json`` reads the
  ``NaN``/``Infinity`` tokens) mean *missing*: scored 0, never dropped.
* Stored verdicts of another judge: true/false, ``"CORRECT"``/``"WRONG"`` (any case), or
  numbers on 0-1 or 0-100; the scale is decided once per file from all of them
  (:func:`stored_judge_scale`).
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

GOLD_SEPARATOR = " | "
"""Joins several gold references into the display text (``ground_truth``)."""

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlevel = 3


def show(value: Any) -> str:
    """A short ``repr`` for messages: long or deeply nested values are cut, never recursed."""
    return _short.repr(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


EXACT_INTEGERS = 2**53
"""Floats below this magnitude hold every integer exactly (IEEE 754 double: 53-bit mantissa)."""


def _number_text(value: int | float) -> str | None:
    """A finite number as text; ``None`` for NaN/Infinity.

    The rule (``docs/formats.md``, "Answers that are not plain text"): an integer reads as
    its digits (``2019`` -> ``"2019"``); an integral float below 2**53 as the integer it is
    (``12.0`` -> ``"12"``, so it matches a gold ``"12"``); any other float as Python's
    shortest round-trip ``repr`` (``0.1`` -> ``"0.1"``, never ``0.1000000000000000055``;
    ``1e+20`` stays ``"1e+20"``).
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) < EXACT_INTEGERS:
            return str(int(value))
        return repr(value)
    return str(value)


def number_conversions(value: Any) -> list[tuple[str, str]]:
    """Each finite number of an answer value, as written in the file and as read.

    Args:
        value: a parsed gold, prediction or answer value (a number, text, a list, null...).

    Returns:
        ``[(repr as in the file, text read)]``, e.g. ``[("12.0", "12")]`` for ``12.0``, one
        pair per number of a list; ``[]`` for text, null, NaN/Infinity and booleans.
    """
    values = value if isinstance(value, list) else [value]
    out = []
    for element in values:
        if _is_number(element):
            text = _number_text(element)
            if text is not None:
                out.append((repr(element), text))
    return out


_NUMERIC_TEXT = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
"""Plain decimal text: what :func:`number_from_text` reads as a number."""


def number_from_text(value: Any) -> Any:
    """A number stored as text (``"0.657"``, ``"1"``) as a float; anything else unchanged.

    The Mem0 harness writes latencies (seconds), ``bleu_score``, ``f1_score`` and
    ``llm_score`` as strings. Only plain decimal text is read (``int``/``float`` syntax,
    spaces around allowed); ``"NaN"``, ``"inf"``, ``"0x10"`` and words stay text.

    Args:
        value: a parsed JSON value.

    Returns:
        ``float`` for numeric text, else ``value`` unchanged.
    """
    if isinstance(value, str) and _NUMERIC_TEXT.match(value):
        return float(value)
    return value


def _non_finite_name(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def answer_text(value: Any) -> str | None:
    """An answer-like value (e.g. ``adversarial_answer``) as text.

    Args:
        value: text, a number (``str()`` of it) or a list of them (``", "``-joined), or null.

    Returns:
        The text, or ``None`` for null.

    Raises:
        TypeError: for objects, booleans or nested lists.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if _is_number(value):
        return _number_text(value) or str(value)
    if isinstance(value, list) and all(isinstance(v, str) or _is_number(v) for v in value):
        return ", ".join(v if isinstance(v, str) else _number_text(v) or str(v) for v in value)
    raise TypeError(f"expected text or a number, got {type(value).__name__}")


@dataclass(frozen=True)
class Gold:
    """A gold answer as read.

    Attributes:
        text: the display text (references joined by :data:`GOLD_SEPARATOR`), or ``None``
            when there is no gold.
        references: every element of a JSON-list gold, as text; empty for a single gold.
        missing: why there is no gold (``"null"``, ``"empty"``, ``"blank"``,
            ``"an empty list"``, ``"NaN"``...), or ``None`` when there is one.
    """

    text: str | None
    references: tuple[str, ...] = ()
    missing: str | None = None


def gold_answer(value: Any) -> Gold:
    """Read a gold answer.

    Args:
        value: the parsed JSON value of the gold field.

    Returns:
        :class:`Gold`. A list keeps each non-blank element (ints as ``str``) as a
        reference, e.g. ``["the Final Harbor", "Port Vell"]`` gives references
        ``("the Final Harbor", "Port Vell")`` and text ``"the Final Harbor | Port Vell"``.

    Raises:
        TypeError: for objects, booleans, or lists holding anything but text and numbers.
    """
    if value is None:
        return Gold(None, missing="null")
    if isinstance(value, str):
        if not value:
            return Gold(None, missing="empty")
        return Gold(value) if value.strip() else Gold(None, missing="blank (only whitespace)")
    if _is_number(value):
        text = _number_text(value)
        return Gold(text) if text is not None else Gold(None, missing=_non_finite_name(value))
    if isinstance(value, list):
        references: list[str] = []
        for element in value:
            if element is None:
                continue
            if isinstance(element, str):
                text = element
            elif _is_number(element):
                text = _number_text(element) or ""
            else:
                raise TypeError(
                    f"a list of gold answers may hold only text and numbers, got "
                    f"{type(element).__name__} {show(element)}"
                )
            if text.strip():
                references.append(text)
        if not references:
            return Gold(None, missing="an empty list" if not value else "a list of blank answers")
        return Gold(GOLD_SEPARATOR.join(references), tuple(references))
    raise TypeError(f"expected text, a number or a list of them, got {type(value).__name__}")


def gold_text(value: Any) -> str | None:
    """The gold answer as text for matching, or ``None`` when there is none or it is unreadable.

    Args:
        value: the parsed JSON value of the gold field (``MISSING`` or anything else).

    Returns:
        :attr:`Gold.text` of :func:`gold_answer`, or ``None`` (missing, null, blank, or a
        value :func:`gold_answer` refuses: the record's own check reports that).
    """
    try:
        return gold_answer(value).text
    except TypeError:
        return None


@dataclass(frozen=True)
class FailedAnswer:
    """A prediction the file marks as failed (``""`` or ``"ERROR"`` in a per-setting file).

    Put in place of the prediction by the layout that knows the marker
    (:mod:`locomo_exp.data.settings`); read as a missing prediction (scored 0, counted).

    Attributes:
        text: the marker as stored.
    """

    text: str


def prediction_answer(value: Any) -> tuple[str, str | None]:
    """Read a prediction.

    Args:
        value: the parsed JSON value of the prediction field.

    Returns:
        ``(text, missing)``: ``("", "null")``, ``("", "NaN")``, ``("", "Infinity")`` or
        ``("", "-Infinity")`` for a missing prediction, ``("", "a failed answer 'ERROR'")``
        for a :class:`FailedAnswer`, else ``(text, None)``. An empty string is an (empty)
        answer, not a missing one, except where a layout marks it failed.

    Raises:
        TypeError: for objects, booleans or nested lists.
    """
    if value is None:
        return "", "null"
    if isinstance(value, FailedAnswer):
        return "", f"a failed answer {value.text!r}"
    if isinstance(value, float) and not math.isfinite(value):
        return "", _non_finite_name(value)
    return answer_text(value) or "", None


VERDICT_WORDS: dict[str, bool] = {"correct": True, "wrong": False, "incorrect": False}
"""Verdict labels stored as text (the Mem0 harness's judge labels), lower-cased -> bool."""


def verdict_value(value: Any) -> Any:
    """A stored verdict as read, with text labels turned into booleans.

    Args:
        value: a parsed JSON value.

    Returns:
        ``True``/``False`` for ``"CORRECT"``/``"WRONG"``/``"INCORRECT"`` (any case, spaces
        ignored), a float for numeric text (the Mem0 harness's ``"llm_score": "1"``), else
        ``value`` unchanged.
    """
    if isinstance(value, str) and value.strip().lower() in VERDICT_WORDS:
        return VERDICT_WORDS[value.strip().lower()]
    return number_from_text(value)


def stored_judge_score(value: Any) -> float:
    """Check one judge verdict stored in a results file; return it as a number.

    Args:
        value: ``true``/``false`` (Zep's ``grade``), ``"CORRECT"``/``"WRONG"``, or a
            number in [0, 100] (the Mem0 harness's 0/1 ``llm_score``, a 0-1 score, or a
            0-100 score).

    Returns:
        ``True``/``CORRECT`` as 1.0, ``False``/``WRONG`` as 0.0, numbers unchanged; put on
        0-100 by the file's :func:`stored_judge_scale`.

    Raises:
        ValueError: for anything else (negative, above 100, NaN, other text, null inside a
            list...).
    """
    value = verdict_value(value)
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if _is_number(value) and math.isfinite(value) and 0 <= value <= 100:
        return float(value)
    raise ValueError(
        "a stored judge verdict must be true/false, CORRECT/WRONG or a number in 0-1 or 0-100, "
        f"got {show(value)}"
    )


class StoredScaleError(ValueError):
    """The stored verdicts of a file are not all on one scale.

    Attributes:
        index: index (into the values given) of a verdict that does not fit.
    """

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


def stored_judge_scale(values: Sequence[Any]) -> float:
    """Factor that puts one file's stored verdicts on 0-100, decided from all of them.

    Every value in [0, 1] (``true``/``false``, 0/1, or fractions such as 0.6667) -> 100;
    any value above 1 -> 1 (already 0-100). So ``1.0, 0.6667, 0.0`` become 100, 66.67, 0
    (mean 55.56), and ``85, 1, 40`` stay as they are.

    Args:
        values: the file's verdicts as read (each already accepted by
            :func:`stored_judge_score`).

    Returns:
        100.0 or 1.0.

    Raises:
        StoredScaleError: when ``true``/``false`` are mixed with numbers other than 0 and 1
            (a boolean cannot be placed on a 0-1 or 0-100 scale of scores).
    """
    values = [verdict_value(v) for v in values]
    has_bool = any(isinstance(v, bool) for v in values)
    if has_bool:
        for index, value in enumerate(values):
            if not isinstance(value, bool) and value not in (0, 1):
                raise StoredScaleError(
                    index,
                    f"stored judge verdicts mix true/false with scores such as {show(value)} "
                    "here: use one kind throughout the file (true/false, 0/1, 0-1 or 0-100)",
                )
    return 100.0 if all(float(v) <= 1.0 for v in values) else 1.0


__all__ = [
    "FailedAnswer",
    "GOLD_SEPARATOR",
    "Gold",
    "StoredScaleError",
    "answer_text",
    "gold_answer",
    "number_conversions",
    "number_from_text",
    "prediction_answer",
    "show",
    "stored_judge_scale",
    "stored_judge_score",
    "verdict_value",
]
