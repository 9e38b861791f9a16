"""The ``template`` protocol: the judge prompt and reply rule come from the user's YAML file.

``judge.protocol=template judge.template=FILE.yaml`` (:mod:`locomo_exp.judge.protocols.templates`).
The file's text is sent as written, with its placeholders filled; the question and
answers are escaped (``&``, ``<``, ``>``) unless the file says ``escape_untrusted: false``.
The protocol's ``prompt_version`` names the template and the first 12 hex digits of the
file's sha256; the whole sha256 is part of every cache key.

The kind of a record, which selects a ``by_kind`` text, is tried in this order: the record's
``kind`` (the criterion a benchmark plug-in judges it by, e.g. an abstention question of any
type), its ``question_type`` when it has one, its category id, its category label
(``multi-hop``, ...). ``{category_name}`` is the record's ``question_type`` when it has one (a
plug-in benchmark's), else the LoCoMo category label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.judge.protocols.base import (
    CATEGORY_LABELS,
    ProtocolSpec,
    Reading,
    Verdict,
    escape_untrusted,
)
from locomo_exp.judge.protocols.templates.schema import (
    JudgeTemplate,
    load_template,
    resolve_template_path,
)

if TYPE_CHECKING:
    from locomo_exp.results import QARecord

TEMPLATE_PROTOCOL = "template"
"""The protocol name (``judge.protocol=template``)."""

_NEVER = re.compile(r"(?!)")


def record_kinds(
    category: int, question_type: str | None = None, kind: str | None = None
) -> list[str]:
    """The kinds a record answers to, most specific first (see the module docstring).

    Args:
        category: the record's category id.
        question_type: its benchmark's kind of question (a plug-in's string key), if any.
        kind: the criterion its benchmark judges it by, when that differs from
            ``question_type`` (:attr:`locomo_exp.results.QARecord.kind`).

    Returns:
        ``[kind, question_type, "<category id>", "<category label>"]`` without the ``None``
        ones and repeats.
    """
    kinds = [k for k in (kind, question_type) if k]
    kinds += [str(category), CATEGORY_LABELS.get(category, "unknown")]
    return list(dict.fromkeys(kinds))


def _kinds_of(record: QARecord) -> list[str]:
    return record_kinds(record.category, record.question_type, record.kind)


@dataclass(frozen=True)
class TemplateProtocol(ProtocolSpec):
    """A :class:`ProtocolSpec` built from a template file (``template`` holds the file)."""

    template: JudgeTemplate | None = None

    def _fill(self, kinds: list[str], question: str, gold: str | None, prediction: str,
              category: int, category_name: str | None = None) -> str:  # fmt: skip
        assert self.template is not None
        user = self.template.user_text(kinds)
        if user is None:
            raise ValueError(
                f"judge.template={self.template.path}: no user text for kind {kinds[0]!r} "
                f"(by_kind has {', '.join(self.template.by_kind)}; add it or a 'user' fallback)"
            )
        escape = escape_untrusted if self.template.escape_untrusted else str
        values = {
            "question": escape("" if question is None else str(question)),
            "gold_answer": escape("" if gold is None else str(gold)),
            "predicted_answer": escape("" if prediction is None else str(prediction)),
            "category": str(category),
            "category_name": category_name or CATEGORY_LABELS.get(category, "unknown"),
        }
        return user.fill(values)

    def build_prompt(
        self, question: str, ground_truth: str | None, predicted_answer: str, category: int
    ) -> str:
        """The template's user text for the category, filled (see :meth:`build_record_prompt`)."""
        kinds = [str(category), CATEGORY_LABELS.get(category, "unknown")]
        return self._fill(kinds, question, ground_truth, predicted_answer, category)

    def build_record_prompt(self, record: QARecord) -> str:
        """The user text for the record's kind, placeholders filled.

        Raises:
            ValueError: when no ``by_kind`` text and no ``user`` fallback fits the record.
        """
        return self._fill(
            _kinds_of(record), record.question, record.ground_truth, record.prediction,
            record.category, record.question_type,
        )  # fmt: skip

    def record_problems(self, records: list[QARecord]) -> list[str]:
        """One line per kind of question the template has no user text for."""
        assert self.template is not None
        missing: dict[str, int] = {}
        for record in records:
            kinds = _kinds_of(record)
            if self.template.user_text(kinds) is None:
                missing[kinds[0]] = missing.get(kinds[0], 0) + 1
        return [
            f"judge.template={self.template.path}: no user text for kind {kind!r} ({n} "
            f"question(s), e.g. by_kind has {', '.join(self.template.by_kind) or 'nothing'}); "
            "add it or a 'user' fallback"
            for kind, n in missing.items()
        ]


def _no_plain_verdicts(text: str) -> tuple[list[Verdict], str]:
    return [], ""


def template_protocol(template: JudgeTemplate) -> TemplateProtocol:
    """The :class:`TemplateProtocol` of a validated template."""
    rule = template.rule
    json_rule = rule.kind == "json_key"

    def bare(text: str) -> Reading | None:
        value = text.strip().strip("*`\"'").strip()
        if not json_rule or not value or "{" in value:
            return None
        reading = rule.read_value(value)
        return reading if reading[0] is not None else None

    return TemplateProtocol(
        name=TEMPLATE_PROTOCOL,
        prompt_version=template.prompt_version,
        system_prompt=template.system,
        reply_format="",
        verdict_field=rule.json_key.lower(),
        output_schema=dict(template.json_schema or {}),
        krippendorff_level=rule.krippendorff_level,
        read=rule.read_value,
        salvage_pattern=rule.salvage_pattern() if json_rule else _NEVER,
        plain_verdicts=rule.plain_verdicts if json_rule else _no_plain_verdicts,
        bare=bare,
        label_scores=dict(rule.labels),
        read_reply=None if json_rule else rule.read_reply,
        unparsed_score=template.unparsed_score,
        response_format=template.response_format,
        template=template,
    )


_LOADED: dict[tuple[str, int, int], TemplateProtocol] = {}


def load_template_protocol(path: str | Path) -> TemplateProtocol:
    """Read a template file into its protocol (memoised on path, mtime and size).

    Raises:
        TemplateError: one line naming the file and the problem.
    """
    file = resolve_template_path(path)
    try:
        stat = file.stat()
        key: tuple[str, int, int] | None = (str(file.resolve()), stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = None  # load_template names the problem
    if key is not None and key in _LOADED:
        return _LOADED[key]
    spec = template_protocol(load_template(file))
    if key is not None:
        _LOADED[key] = spec
    return spec


def template_card(spec: ProtocolSpec) -> dict[str, Any] | None:
    """What the card, summary, MLflow and report say about a template run (``None`` otherwise).

    Returns:
        ``name``, ``version``, ``path``, ``sha256``, ``rule``, ``response_format``,
        ``on_unparsed`` (``unscored`` or ``score N``), ``escape_untrusted``, ``kinds`` (the
        ``by_kind`` keys), ``fixed`` (the settings the file fixes) and ``verdict_scores``
        (every score its rule can give, 0-100, or ``None`` for a score range: ``[0, 100]``
        is a binary verdict).
    """
    template = getattr(spec, "template", None)
    if not isinstance(template, JudgeTemplate):
        return None
    return {
        "name": template.name,
        "version": template.version,
        "path": str(template.path),
        "sha256": template.sha256,
        "rule": template.rule.describe(),
        "response_format": template.response_format,
        "on_unparsed": "unscored"
        if template.unparsed_score is None
        else f"score {template.unparsed_score:g}",
        "escape_untrusted": template.escape_untrusted,
        "kinds": list(template.by_kind),
        "fixed": dict(template.fixed),
        "verdict_scores": (
            None if (scores := template.rule.verdict_scores) is None else list(scores)
        ),
    }
