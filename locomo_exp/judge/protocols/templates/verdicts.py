"""How a template reads the judge's reply: one verdict rule per template.

Three rules, one per way published harnesses read their judge:

* ``json_key`` (+ ``labels`` or ``score_range``): the value of one key of the reply's JSON
  object, read with the project's JSON rules (fences, prose around the object, quoted
  verdicts: :mod:`locomo_exp.judge.parsing`). ``labels`` maps a label to a score 0-100
  (``{CORRECT: 100, WRONG: 0}``; compared without case and a trailing ``.``);
  ``score_range: [lo, hi]`` maps a number linearly onto 0-100.
* ``contains``: labels looked for in the lower-cased reply -> score. One label is a substring
  test, as some benchmarks' scorers read their judge (``'yes' in reply.lower()``:
  ``contains: {yes: 100}`` with ``otherwise: 0``). With several labels each one matches as a
  whole word (no letter, digit or ``_`` touching it), longest first, so ``incorrect`` is never
  read as ``correct`` and ``not correct`` is not read as ``correct``.
* ``regex``: every match of a pattern in the reply; its group ``verdict`` (or group 1, or the
  whole match) read through ``labels`` or ``score_range``.

The verdict is the judge's conclusion (docs/judge.md, "One reply, one verdict"): when a reply
holds several verdicts that disagree (it quotes the answer's ``CORRECT`` and concludes
``WRONG``; two regex matches give different labels) the reply is unreadable, with the reason --
never the first verdict-looking text.

A reply no rule reads, or a label the template does not map, is a :data:`Reading` with a
reason (unscored and counted; the template's ``on_unparsed`` may score it instead).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from locomo_exp.judge.protocols.base import Reading, Verdict

_NUMBER_RE = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")
RULE_KEYS = ("json_key", "contains", "regex")
"""The keys that name a verdict rule; a template has exactly one."""


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


@dataclass(frozen=True)
class VerdictRule:
    """A template's verdict rule (see the module docstring).

    Attributes:
        kind: ``json_key``, ``contains`` or ``regex``.
        json_key: the reply's JSON key (``json_key`` rule).
        labels: label -> score 0-100 (``json_key``/``regex``), compared case-insensitively.
        score_range: ``(lo, hi)``: a number read is scaled to 0-100, or ``None``.
        contains: ``(substring, score)`` pairs in the order tried (lower-cased).
        regex: the compiled pattern (``regex`` rule).
        otherwise: score when ``contains``/``regex`` finds nothing, or ``None`` (unscored).
    """

    kind: Literal["json_key", "contains", "regex"]
    json_key: str = ""
    labels: Mapping[str, float] = field(default_factory=dict)
    score_range: tuple[float, float] | None = None
    contains: tuple[tuple[str, float], ...] = ()
    regex: re.Pattern[str] | None = None
    otherwise: float | None = None

    @property
    def krippendorff_level(self) -> Literal["interval", "nominal"]:
        """``interval`` for a score range, ``nominal`` for labels and substrings."""
        return "interval" if self.score_range is not None else "nominal"

    @property
    def verdict_scores(self) -> tuple[float, ...] | None:
        """Every score (0-100) the rule can give, sorted; ``None`` for a score range.

        ``(0.0, 100.0)`` for ``{CORRECT: 100, WRONG: 0}``: a binary verdict, as a binary
        protocol gives.
        """
        if self.score_range is not None:
            return None
        scores = set(self.labels.values()) | {score for _, score in self.contains}
        if self.otherwise is not None:
            scores.add(self.otherwise)
        return tuple(sorted(scores))

    def describe(self) -> str:
        """One line for the card and report, e.g. ``json_key 'label': CORRECT=100, WRONG=0``."""
        if self.kind == "contains":
            pairs = ", ".join(f"'{s}'={v:g}" for s, v in self.contains)
            rest = "unscored" if self.otherwise is None else f"{self.otherwise:g}"
            return f"contains (lower-cased reply): {pairs}; otherwise {rest}"
        if self.score_range is not None:
            lo, hi = self.score_range
            scale = f"number in [{lo:g}, {hi:g}] scaled to 0-100"
        else:
            scale = ", ".join(f"{k}={v:g}" for k, v in self.labels.items())
        where = (
            f"json_key '{self.json_key}'"
            if self.kind == "json_key"
            else f"regex {self.regex.pattern if self.regex else ''!r}"
        )
        return f"{where}: {scale}"

    def read_value(self, value: Any) -> Reading:
        """A verdict value (JSON value or matched text) -> verdict, or ``(None, reason)``."""
        if self.score_range is not None:
            return self._score(value)
        text = _as_text(value).rstrip(".").strip()
        for label, score in self.labels.items():
            if label.lower() == text.lower():
                return Verdict(score, label), ""
        known = ", ".join(self.labels)
        return None, f"reply label {text!r} is not one the template maps ({known})"

    def _score(self, value: Any) -> Reading:
        assert self.score_range is not None
        lo, hi = self.score_range
        text = _as_text(value)
        if isinstance(value, bool) or not _NUMBER_RE.match(text):
            return None, f"reply value {text!r} is not a number"
        number = float(text)
        if not math.isfinite(number) or not lo <= number <= hi:
            return None, f"reply value {number:g} is outside the template's range [{lo:g}, {hi:g}]"
        return Verdict(100.0 * (number - lo) / (hi - lo)), ""

    def contains_pattern(self) -> re.Pattern[str]:
        """The ``contains`` labels as one pattern over the lower-cased reply.

        One label: a plain substring (e.g. ``'yes' in reply.lower()``).
        Several: whole words (no word character on either side), longest label first, so
        that at each position the longest label that fits is the one read.
        """
        words = sorted((label for label, _ in self.contains), key=len, reverse=True)
        alternation = "|".join(re.escape(w) for w in words)
        if len(words) == 1:
            return re.compile(alternation)
        return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)")

    def read_reply(self, text: str) -> Reading:
        """Read a whole reply with ``contains`` or ``regex`` (``json_key`` uses the JSON parser).

        Every label (``contains``) or match (``regex``) in the reply is read; when they give
        different scores the reply is unreadable, ``(None, "conflicting verdicts ...")``.
        """
        if self.kind == "contains":
            scores = dict(self.contains)
            found = {m.group(0): scores[m.group(0)]
                     for m in self.contains_pattern().finditer(text.lower())}  # fmt: skip
            if not found:
                if self.otherwise is not None:
                    return Verdict(self.otherwise), ""
                listed = ", ".join(repr(s) for s, _ in self.contains)
                return None, f"none of {listed} occurs in the reply"
            if len(set(found.values())) > 1:
                listed = ", ".join(f"{label!r}={score:g}" for label, score in found.items())
                return None, f"conflicting verdicts: the reply contains {listed}"
            label, score = next(iter(found.items()))
            return Verdict(score, label), ""
        assert self.regex is not None
        readings = [self.read_value(self._matched(m)) for m in self.regex.finditer(text)]
        if not readings:
            if self.otherwise is not None:
                return Verdict(self.otherwise), ""
            return None, f"the template's regex {self.regex.pattern!r} does not match the reply"
        verdicts = [v for v, _ in readings if v is not None]
        if not verdicts:
            return readings[0]
        shown = sorted({str(v.shown) for v in verdicts})
        if len({v.score for v in verdicts}) > 1:
            return None, f"conflicting verdicts: the template's regex matches {', '.join(shown)}"
        return verdicts[-1], ""

    def _matched(self, match: re.Match[str]) -> str | None:
        assert self.regex is not None
        if "verdict" in self.regex.groupindex:
            return match.group("verdict")
        return match.group(1) if self.regex.groups else match.group(0)

    def plain_verdicts(self, text: str) -> tuple[list[Verdict], str]:
        """Verdicts stated in plain text after the reply's last JSON verdict (``json_key``).

        ``<json_key>: <value>`` (or ``=``) in any case; with labels, also a label written as a
        whole word in the file's own case when it has an upper-case letter (``WRONG``, never
        the prose word ``wrong``). The parser lets them override the JSON before them, as for
        the ``binary`` protocol (:mod:`locomo_exp.judge.parsing`, rule 2).

        Args:
            text: the reply after its last JSON object carrying the key, quotations removed.

        Returns:
            ``(verdicts, "")``; ``([], reason)`` for a negated label (``NOT CORRECT``) or a
            value the rule does not read.
        """
        if self.score_range is not None:
            value = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
        else:
            value = "|".join(re.escape(k) for k in sorted(self.labels, key=len, reverse=True))
        key = re.escape(self.json_key)
        field_re = re.compile(rf'(?<!\w){key}(?!\w)[*_\s]*[:=][*_\s]*"?(?P<v>{value})(?!\w)', re.I)
        values = [m.group("v") for m in field_re.finditer(text)]
        shouted = [k for k in self.labels if k != k.lower()]
        if shouted:
            words = "|".join(re.escape(k) for k in sorted(shouted, key=len, reverse=True))
            word_re = re.compile(
                rf"(?:(?<!\w)(?P<neg>(?i:not|isn't))\s+)?(?<!\w)(?P<w>{words})(?!\w)"
            )
            for match in word_re.finditer(text):
                if match.group("neg"):
                    return [], f"negated verdict {match.group(0)!r} in the text after the JSON"
                values.append(match.group("w"))
        verdicts: list[Verdict] = []
        for text_value in values:
            verdict, reason = self.read_value(text_value)
            if verdict is None:
                return [], f"plain-text verdict after the JSON: {reason}"
            verdicts.append(verdict)
        return verdicts, ""

    def json_schema(self) -> dict[str, Any] | None:
        """The reply's JSON schema for ``response_format: json_schema`` (``json_key`` only)."""
        if self.kind != "json_key":
            return None
        prop: dict[str, Any] = (
            {"type": "number"}
            if self.score_range is not None
            else {"type": "string", "enum": list(self.labels)}
        )
        return {
            "type": "object",
            "properties": {self.json_key: prop},
            "required": [self.json_key],
            "additionalProperties": False,
        }

    def salvage_pattern(self) -> re.Pattern[str]:
        """Finds the key's value in an unfinished JSON object (group 1: the value text)."""
        key = re.escape(self.json_key)
        if self.score_range is not None:
            return re.compile(rf'"{key}"\s*:\s*"?([+-]?\d+(?:\.\d+)?)(?=[\s",}}])', re.I)
        words = "|".join(re.escape(k) for k in self.labels)
        return re.compile(rf'"{key}"\s*:\s*"({words})"', re.I)

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any], fail: Callable[[str], Exception]) -> VerdictRule:
        """The rule a template's YAML names.

        Args:
            raw: the template's YAML map.
            fail: message -> the exception to raise (names the file).

        Raises:
            The exception ``fail`` returns: no rule, two rules, a rule without its
            ``labels``/``score_range``, a bad score or pattern.
        """
        given = [k for k in RULE_KEYS if raw.get(k) is not None]
        if not given:
            raise fail(
                "no verdict rule: give json_key (with labels or score_range), contains, or regex"
            )
        if len(given) > 1:
            raise fail(f"give one verdict rule, not {' and '.join(given)}")
        kind = given[0]
        otherwise = raw.get("otherwise")
        if otherwise is not None:
            if kind == "json_key":
                raise fail("otherwise goes with contains or regex (for json_key: on_unparsed)")
            otherwise = _score(fail, "otherwise", otherwise)
        if kind == "contains":
            if raw.get("labels") is not None or raw.get("score_range") is not None:
                raise fail("contains maps substrings to scores itself: drop labels/score_range")
            pairs = raw["contains"]
            if not isinstance(pairs, Mapping) or not pairs:
                raise fail("contains must be a non-empty map of substring -> score (yes: 100)")
            contains = tuple(
                (_as_text(s).lower(), _score(fail, f"contains.{s}", v)) for s, v in pairs.items()
            )
            _check_contains(fail, contains)
            return cls(kind="contains", contains=contains, otherwise=otherwise)
        labels, score_range = _labels_or_range(raw, fail)
        if kind == "json_key":
            key = raw["json_key"]
            if not isinstance(key, str) or not key.strip():
                raise fail("json_key must be the name of the reply's JSON key (label)")
            return cls(
                kind="json_key", json_key=key.strip(), labels=labels, score_range=score_range
            )
        try:
            pattern = re.compile(str(raw["regex"]))
        except re.error as exc:
            raise fail(f"regex {raw['regex']!r} does not compile ({exc})") from None
        return cls(
            kind="regex", regex=pattern, labels=labels, score_range=score_range, otherwise=otherwise
        )


def _score(fail: Callable[[str], Exception], key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        raise fail(f"{key}={value!r} must be a score in [0, 100]")
    return float(value)


def _check_contains(
    fail: Callable[[str], Exception], contains: tuple[tuple[str, float], ...]
) -> None:
    """Refuse ``contains`` labels that cannot be told apart in a reply."""
    seen: set[str] = set()
    for label, _ in contains:
        if not label:
            raise fail("contains has an empty label; every label must be text")
        if label in seen:
            raise fail(f"contains.{label}: two labels differ only in case; the reply is "
                       "compared lower-cased")  # fmt: skip
        seen.add(label)


def _labels_or_range(
    raw: Mapping[str, Any], fail: Callable[[str], Exception]
) -> tuple[dict[str, float], tuple[float, float] | None]:
    labels, score_range = raw.get("labels"), raw.get("score_range")
    if (labels is None) == (score_range is None):
        raise fail("give labels ({CORRECT: 100, WRONG: 0}) or score_range ([0, 10]), one of them")
    if labels is not None:
        if not isinstance(labels, Mapping) or not labels:
            raise fail("labels must be a non-empty map of label -> score (CORRECT: 100)")
        out = {_as_text(k): _score(fail, f"labels.{k}", v) for k, v in labels.items()}
        if len({k.lower() for k in out}) != len(out):
            raise fail("labels differ only in case; labels are compared without case")
        return out, None
    if (
        not isinstance(score_range, list)
        or len(score_range) != 2
        or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in score_range)
        or not score_range[0] < score_range[1]
    ):
        raise fail(f"score_range={score_range!r} must be [low, high] with low < high")
    return {}, (float(score_range[0]), float(score_range[1]))
