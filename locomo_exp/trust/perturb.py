"""Deterministic perturbations of a gold answer, for audit controls that must be rejected.

Rules (each returns ``None`` when it does not apply, so the record is not eligible):

* **Date shift** (:func:`shift_date`). The first date in the gold is found, most specific
  form first: day-month-year (``7 May 2023``, ``24June, 2022``), month-day-year
  (``May 7, 2023``, ``May 7th 2023``), month-year (``June 2023``, ``May, 2023``), a bare
  year 1900-2099 (``2022``). Month names: full or three-letter (``Sept`` too), any case.
  One component is shifted: which one is ``crc32(question_id) % k`` over the components
  the date has (day, month, year for a full date; month, year for month-year; year for a
  year): day -> 10 days later (calendar arithmetic, so month and year may roll over),
  month -> 3 months later (day clamped to the month's length), year -> 1 year later
  (29 February -> 28 February). The text around the date, separators and the month
  name's style (full/short, case) are kept.
* **Number change** (:func:`change_number`). The first number outside any date: digits
  (``3``, ``40``, ``3.5``, also inside ``$10`` or ``5K``) or a number word ``one`` ..
  ``twelve``. Its value ``v`` becomes ``2v`` (``0`` -> ``1``); digits stay digits (same
  decimals), words stay words (same capitalisation; ``twenty-four`` at most).
* **Name swap** (:func:`swap_name`). The gold must mention exactly one distinct speaker
  of its conversation (whole word, case-sensitive); every occurrence becomes the next
  speaker in the conversation's sorted speaker list (with two speakers: the other one).
  Golds naming two speakers are skipped ("Evan and Sam" swapped is the same answer).
* **Speakers** (:func:`speakers_from_questions`), when not given: the capitalised words
  (``[A-Z][a-z]+``) that are not the first word of a question, not a month or weekday,
  and appear in at least 15% (and at least 2) of the conversation's questions; the two
  most frequent (ties alphabetical). On ``locomo10.json`` this finds both speakers of
  every one of the 10 conversations and nothing else.
"""

from __future__ import annotations

import calendar
import re
import zlib
from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta

MONTHS: tuple[str, ...] = tuple(calendar.month_name[1:])
_MONTH_ALT = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_YEAR = r"(?:19|20)\d{2}"
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "dmy",
        re.compile(
            rf"(?<![\w.])(?P<d>\d{{1,2}})(?P<sfx>st|nd|rd|th)?\s*(?P<m>{_MONTH_ALT})\b\.?,?\s*"
            rf"(?P<y>{_YEAR})(?!\d)",
            re.IGNORECASE,
        ),
    ),
    (
        "mdy",
        re.compile(
            rf"\b(?P<m>{_MONTH_ALT})\b\.?\s*(?P<d>\d{{1,2}})(?P<sfx>st|nd|rd|th)?,?\s*"
            rf"(?P<y>{_YEAR})(?!\d)",
            re.IGNORECASE,
        ),
    ),
    (
        "my",
        re.compile(rf"\b(?P<m>{_MONTH_ALT})\b\.?,?\s*(?P<y>{_YEAR})(?!\d)", re.IGNORECASE),
    ),
    ("y", re.compile(rf"(?<![\w.])(?P<y>{_YEAR})(?![\w])")),
)
_COMPONENTS = {
    "dmy": ("day", "month", "year"),
    "mdy": ("day", "month", "year"),
    "my": ("month", "year"),
    "y": ("year",),
}

DAY_SHIFT_DAYS = 10
"""Days added by a day shift."""
MONTH_SHIFT = 3
"""Months added by a month shift."""
YEAR_SHIFT = 1
"""Years added by a year shift."""

_NUMBER_WORDS: tuple[str, ...] = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "twenty-one",
    "twenty-two",
    "twenty-three",
    "twenty-four",
)
_NUMBER_RE = re.compile(
    r"(?<![\w.])(?P<digits>\d+(?:\.\d+)?)(?!\d)|\b(?P<word>"
    + "|".join(_NUMBER_WORDS[:13])
    + r")\b",
    re.IGNORECASE,
)
_NON_NAMES = (
    frozenset(MONTHS) | frozenset(calendar.day_name) | {m[:3] for m in MONTHS} | {"Sept", "I"}
)


def stable_index(key: str, k: int) -> int:
    """``crc32(key) % k``: a choice that depends only on ``key`` (not on sampling order)."""
    return zlib.crc32(key.encode("utf-8")) % k


def _month_number(text: str) -> int:
    low = text.lower()[:3]
    return next(i for i, name in enumerate(MONTHS, start=1) if name.lower()[:3] == low)


def _month_text(number: int, like: str) -> str:
    name = MONTHS[number - 1]
    if like.lower() != MONTHS[_month_number(like) - 1].lower():  # an abbreviation
        name = "Sept" if number == 9 and like.lower().startswith("sept") else name[:3]
    if like.isupper() and len(like) > 1:
        return name.upper()
    if like[:1].islower():
        return name.lower()
    return name


def _add_months(day: date, months: int) -> date:
    total = day.month - 1 + months
    year, month = day.year + total // 12, total % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def find_dates(text: str) -> list[tuple[str, re.Match[str]]]:
    """Date expressions in ``text``, non-overlapping, most specific form winning.

    Args:
        text: any text (a gold answer).

    Returns:
        ``(form, match)`` pairs in text order; ``form`` is ``dmy``, ``mdy``, ``my`` or ``y``.
    """
    taken: list[tuple[int, int]] = []
    found: list[tuple[str, re.Match[str]]] = []
    for form, pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            if form != "y" and not _valid_date_match(form, match):
                continue
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            taken.append(match.span())
            found.append((form, match))
    return sorted(found, key=lambda item: item[1].start())


def _valid_date_match(form: str, match: re.Match[str]) -> bool:
    if "d" not in match.groupdict():
        return True
    month, year = _month_number(match["m"]), int(match["y"])
    return 1 <= int(match["d"]) <= calendar.monthrange(year, month)[1]


def shift_date(gold: str, key: str) -> str | None:
    """The gold with its first date shifted by one component (rules in the module doc).

    Args:
        gold: the gold answer text.
        key: a stable key (the question id) choosing the component.

    Returns:
        The perturbed text, or ``None`` when the gold has no date.
    """
    dates = find_dates(gold)
    if not dates:
        return None
    form, match = dates[0]
    components = _COMPONENTS[form]
    component = components[stable_index(key, len(components))]
    year = int(match["y"])
    month = _month_number(match["m"]) if form != "y" else 1
    day = int(match["d"]) if form in ("dmy", "mdy") else 1
    old = date(year, month, day)
    if component == "day":
        new = old + timedelta(days=DAY_SHIFT_DAYS)
    elif component == "month":
        new = _add_months(old, MONTH_SHIFT)
    else:
        new = _add_months(old, 12 * YEAR_SHIFT)
    replacements = {"y": str(new.year)}
    if form != "y":
        replacements["m"] = _month_text(new.month, match["m"])
    if form in ("dmy", "mdy"):
        replacements["d"] = str(new.day)
        if match["sfx"]:
            replacements["sfx"] = _ordinal_suffix(new.day)
    pieces, cursor = [], match.start()
    for group in sorted(replacements, key=match.start):
        pieces.append(gold[cursor : match.start(group)])
        pieces.append(replacements[group])
        cursor = match.end(group)
    return gold[: match.start()] + "".join(pieces) + gold[cursor:]


def _ordinal_suffix(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _word_like(value: int, like: str) -> str:
    word = _NUMBER_WORDS[value]
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def change_number(gold: str) -> str | None:
    """The gold with its first number (outside dates) doubled (rules in the module doc).

    Args:
        gold: the gold answer text.

    Returns:
        The perturbed text, or ``None`` when the gold has no number outside a date.
    """
    date_spans = [match.span() for _, match in find_dates(gold)]
    for match in _NUMBER_RE.finditer(gold):
        if any(match.start() < end and start < match.end() for start, end in date_spans):
            continue
        if match["digits"] is not None:
            text = match["digits"]
            decimals = len(text.split(".")[1]) if "." in text else 0
            value = float(text)
            new_value = 2 * value if value else 1.0
            new = f"{new_value:.{decimals}f}"
        else:
            value_int = _NUMBER_WORDS.index(match["word"].lower())
            new = _word_like(2 * value_int if value_int else 1, match["word"])
        return gold[: match.start()] + new + gold[match.end() :]
    return None


def swap_name(gold: str, speakers: Iterable[str]) -> str | None:
    """The gold with its one speaker name replaced by the next speaker (module doc).

    Args:
        gold: the gold answer text.
        speakers: the conversation's speaker names (at least two for a swap).

    Returns:
        The perturbed text, or ``None`` when fewer than two speakers are known or the gold
        names no speaker or more than one.
    """
    names = sorted(set(speakers))
    if len(names) < 2:
        return None
    present = [n for n in names if re.search(rf"\b{re.escape(n)}\b", gold)]
    if len(present) != 1:
        return None
    name = present[0]
    other = names[(names.index(name) + 1) % len(names)]
    return re.sub(rf"\b{re.escape(name)}\b", other, gold)


SPEAKER_MIN_SHARE = 0.15
"""Share of a conversation's questions a capitalised word must appear in to be a speaker."""


def speakers_from_questions(questions: Iterable[str], max_speakers: int = 2) -> tuple[str, ...]:
    """Guess a conversation's speakers from its questions (rule in the module doc).

    Args:
        questions: the question texts of one conversation.
        max_speakers: how many names to keep at most (LoCoMo conversations have two).

    Returns:
        The names, most frequent first (ties alphabetical); may be empty.
    """
    counts: Counter[str] = Counter()
    total = 0
    for question in questions:
        total += 1
        words = {
            m.group(0)
            for m in re.finditer(r"\b[A-Z][a-z]+\b", question)
            if question[: m.start()].strip(" \t\"'(“") and m.group(0) not in _NON_NAMES
        }
        counts.update(words)
    threshold = max(2, SPEAKER_MIN_SHARE * total)
    ranked = sorted((w for w, c in counts.items() if c >= threshold), key=lambda w: (-counts[w], w))
    return tuple(ranked[:max_speakers])
