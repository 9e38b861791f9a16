"""The run log: what every run of every benchmark has, as one typed (pydantic) model.

Every job (LoCoMo and each registered benchmark plug-in) builds one :class:`RunLog` and saves it
as the ``run_log`` section of its ``summary.json`` (docs/run_log.md). The sweep's rows and the
sweep parent's MLflow headlines read it back through :func:`read_run_log`, never by the keys
of a benchmark's own sections. Its JSON Schema, generated from the model
(:func:`run_log_schema`), is published as ``docs/run_log.schema.json``.

Builders only copy figures a benchmark already computed (no statistic is computed here or
by a builder). Values carry their unit: :data:`Unit` ``"0-1"`` or ``"0-100"``; money in US
dollars; tokens as counts. Unknown is ``None``, never 0.

This module imports pydantic: it is imported by the modules that build or read a log, never
by ``--help`` or :mod:`locomo_exp.config` (``tests/project/test_entrance.py``). It imports
nothing else from the package (foundations layer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

RUN_LOG_VERSION: Final = 2
"""``schema_version`` of a ``summary.json`` holding a ``run_log`` section (and of the
section). Version 1 (before the run log) is read by rebuilding its log from the
benchmark's own sections; a newer version is refused (:func:`check_version`)."""

Unit = Literal["0-1", "0-100"]
"""The scale of a figure: a proportion or mean on 0-1, or percent / J on 0-100."""


class _Model(BaseModel):
    """Frozen, and refusing keys it does not know (a typo in a builder fails its test)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RunSpec(_Model):
    """What was asked of the run: the scorer, the judge, a profile or parser.

    Attributes:
        scorer: where the verdicts or scores came from: ``f1``, ``judge``, ``both``
            (LoCoMo's ``scorer.name``), or ``stored verdicts`` for a plug-in run that read the
            file's own.
        judge_model: the judge model of this run's calls (``None``: no judge called).
        judge_protocol: its protocol or prompt name.
        judge_runs: calls per question or item.
        profile: the benchmark's scoring profile (BEAM's ``beam-nugget``), when it has one.
        parser: the verdict reader (LoCoMo-Plus's ``ours`` or ``authors``), when it has one.
    """

    scorer: str
    judge_model: str | None = None
    judge_protocol: str | None = None
    judge_runs: int | None = None
    profile: str | None = None
    parser: str | None = None


class InputFile(_Model):
    """The scored file.

    Attributes:
        path: absolute path as read.
        sha256: hex digest of its bytes.
        format: the detected or configured layout.
        records: questions (or rubric-bearing questions, or items) scored from it.
    """

    path: str
    sha256: str
    format: str
    records: int = Field(ge=0)


class GroupResult(_Model):
    """One group of questions of one metric (a category, question type, ability, overall).

    Attributes:
        n: questions in the group that have a figure.
        value: the group's figure in its metric's unit, or ``None`` (not measured).
        ci_low: lower bound of its 95% interval, or ``None`` (none computed).
        ci_high: upper bound, or ``None``.
    """

    n: int = Field(ge=0)
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class MetricResult(_Model):
    """One metric's figures by group.

    Attributes:
        title: what the figure is, in words (``"J (judge, mean of runs)"``).
        unit: its scale.
        interval: how the intervals were made (``"95% percentile cluster bootstrap over
            chats (1000 resamples)"``), or ``None`` when there are none.
        groups: the benchmark's own group key, as a string (LoCoMo ``"1"``..``"5"``,
            ``"overall_1_4"``, ``"overall"``; a plug-in's question types; BEAM abilities;
            LoCoMo-Plus categories) -> result.
    """

    title: str
    unit: Unit
    interval: str | None = None
    groups: dict[str, GroupResult]


class Figure(_Model):
    """One headline figure, named as the benchmark's own MLflow run names it.

    Attributes:
        name: the metric name (``j/overall``, ``beam-nugget/pass_rate/overall``,
            ``ours/cognitive``).
        value: the figure as that run logs it (its unit), or ``None``: not measured.
        unit: its scale.
        ci_low: lower bound of its 95% interval, or ``None``.
        ci_high: upper bound, or ``None``.
        n: questions behind it, or ``None`` when not counted.
    """

    name: str
    value: float | None
    unit: Unit
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None


class JudgeSpend(_Model):
    """What this run's judge did and cost (a run that called no judge has no such part).

    Attributes:
        status: ``ok``, ``dry run``, or what stopped it (the run's own status words).
        calls: calls made to the API (``None``: not recorded).
        parse_failures: replies without a verdict (``None``: not measured, e.g. a dry run).
        api_errors: calls that failed (``None``: not measured).
        input_tokens: input tokens of the calls made (``None``: not recorded).
        output_tokens: output tokens of the calls made.
        input_tokens_in_all: with the calls answered from the judge cache.
        output_tokens_in_all: the same for output tokens.
        cost_usd: US dollars of the calls made (answers, audit, panel), list price;
            ``None`` when a price is unknown.
        cost_in_all_usd: with the cached calls at their stored usage; ``None`` when unknown.
        dry_run_estimate: a dry run's estimate (calls, tokens, cost) as the run wrote it.
    """

    status: str
    calls: int | None = None
    parse_failures: int | None = None
    api_errors: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_tokens_in_all: int | None = None
    output_tokens_in_all: int | None = None
    cost_usd: float | None = None
    cost_in_all_usd: float | None = None
    dry_run_estimate: dict[str, Any] | None = None


class TrustBrief(_Model):
    """The judge's trust checks, in brief (the full section stays in the benchmark's own).

    Attributes:
        gate_passed: whether the audit's gate passed (``None``: no gate set or no audit).
        false_accept_rate: the audit's pooled false-accept rate (0-1), or ``None``.
        false_reject_rate: its pooled false-reject rate (0-1), or ``None``.
        corrected: the corrected headline (Rogan-Gladen, from the audit or labels), or
            ``None``.
        warnings: the checks' warnings (J inflated, J deflated, ...).
    """

    gate_passed: bool | None = None
    false_accept_rate: float | None = None
    false_reject_rate: float | None = None
    corrected: Figure | None = None
    warnings: list[str] = Field(default_factory=list)


class RunLog(_Model):
    """What every run of every benchmark has: the ``run_log`` section of ``summary.json``.

    Attributes:
        schema_version: :data:`RUN_LOG_VERSION`.
        benchmark: the benchmark's registry name (``locomo``, a plug-in's: ``beam``,
            ``locomo_plus``).
        title: its display name.
        spec: what was asked.
        input: the scored file.
        metrics: metric name -> figures by group (the benchmark's question-kind keys).
        headline: the figures a reader and a sweep look at first, in order.
        judge: this run's judge, or ``None`` when none was called or asked for.
        trust: the judge's trust checks, or ``None`` when none ran.
        warnings: what the reader must see first (the run's own warnings).
        status: part -> ``ok`` or what happened (the run's own status words).
    """

    schema_version: Literal[2] = RUN_LOG_VERSION
    benchmark: str
    title: str
    spec: RunSpec
    input: InputFile
    metrics: dict[str, MetricResult]
    headline: list[Figure]
    judge: JudgeSpend | None = None
    trust: TrustBrief | None = None
    warnings: list[str] = Field(default_factory=list)
    status: dict[str, str] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The section as JSON types (``model_dump(mode="json")``), keys in field order."""
        return self.model_dump(mode="json")

    def headline_values(self) -> dict[str, float | None]:
        """``{figure name: value}`` of :attr:`headline`, in order (its units)."""
        return {figure.name: figure.value for figure in self.headline}


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _money(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None


def judge_spend(
    sections: list[Mapping[str, Any]],
    *,
    status: str,
    dry_run_estimate: Mapping[str, Any] | None = None,
    cost_usd: float | None = None,
    cost_in_all_usd: float | None = None,
) -> JudgeSpend:
    """A :class:`JudgeSpend` from the judge job's own sections (``counts``, ``tokens``, cost).

    Every job's judge section has the judge job's layout (:mod:`locomo_exp.judge.job`):
    ``counts`` (``calls_made``, ``parse_failure``, ``api_error``), ``tokens`` (``input``,
    ``output``, ``cached_input``, ``cached_output``), ``estimated_cost_usd`` and
    ``estimated_cost_usd_including_cached``. Several sections (BEAM's item calls and
    alignment calls) are added up; a count absent from every section is ``None``.

    Args:
        sections: the judge sections, first the main one.
        status: the judge's status words.
        dry_run_estimate: a dry run's estimate; then no count is measured (``None``).
        cost_usd: the run's judge cost (USD) when the job already added the audit's and the
            panel's (LoCoMo's trust total); default: the sections' costs added, ``None``
            when one is unknown.
        cost_in_all_usd: the same with cached calls; default: the main section's
            ``estimated_cost_usd_including_cached``.

    Returns:
        The spend; tokens ``None`` when no section records them.
    """
    counts = [section.get("counts") or {} for section in sections]
    tokens = [section.get("tokens") or {} for section in sections]

    def total(parts: list[Mapping[str, Any]], key: str) -> int | None:
        found = [_count(part.get(key)) for part in parts if key in part]
        known = [value for value in found if value is not None]
        return sum(known) if known else None

    def plus(first: int | None, second: int | None) -> int | None:
        return None if first is None else first + (second or 0)

    if cost_usd is None:
        costs = [_money(s.get("estimated_cost_usd")) for s in sections if s.get("tokens")]
        cost_usd = sum(c for c in costs if c is not None) if costs and None not in costs else None
    if cost_in_all_usd is None and sections:
        cost_in_all_usd = _money(sections[0].get("estimated_cost_usd_including_cached"))
    dry = dry_run_estimate is not None
    return JudgeSpend(
        status=status,
        calls=None if dry else total(counts, "calls_made"),
        parse_failures=None if dry else total(counts, "parse_failure"),
        api_errors=None if dry else total(counts, "api_error"),
        input_tokens=total(tokens, "input"),
        output_tokens=total(tokens, "output"),
        input_tokens_in_all=plus(total(tokens, "input"), total(tokens, "cached_input")),
        output_tokens_in_all=plus(total(tokens, "output"), total(tokens, "cached_output")),
        cost_usd=cost_usd,
        cost_in_all_usd=cost_in_all_usd,
        dry_run_estimate=None if dry_run_estimate is None else dict(dry_run_estimate),
    )


def run_log_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`RunLog` (pydantic's ``model_json_schema``, draft 2020-12).

    Returns:
        The schema with ``$id`` and ``$schema`` set; ``docs/run_log.schema.json`` is this,
        written by :func:`schema_text`.
    """
    schema = RunLog.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"locomo_exp/run_log/v{RUN_LOG_VERSION}",
        **schema,
    }


def schema_text() -> str:
    """The published schema file's text: :func:`run_log_schema`, indented, newline-ended."""
    return json.dumps(run_log_schema(), indent=2, ensure_ascii=False) + "\n"


def check_version(summary: Mapping[str, Any], source: str) -> int:
    """The ``schema_version`` of a ``summary.json``; a newer one than this code is refused.

    Args:
        summary: the parsed file.
        source: the file, named in the message.

    Returns:
        The version (1 for a file without the key, written before it existed).

    Raises:
        ValueError: one line naming the file and the version, when it is newer than
            :data:`RUN_LOG_VERSION` or not a whole number.
    """
    raw = summary.get("schema_version", 1)
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 1:
        raise ValueError(f"{source}: schema_version {raw!r} is not a version this locomo_exp "
                         "reads (a whole number from 1)")
    if raw > RUN_LOG_VERSION:
        raise ValueError(f"{source}: summary.json schema_version {raw} is newer than this "
                         f"locomo_exp reads ({RUN_LOG_VERSION}); upgrade locomo_exp")
    return raw


def read_run_log(summary: Mapping[str, Any], source: str) -> RunLog | None:
    """The typed run log of a ``summary.json``, or ``None`` for a file written before it.

    Args:
        summary: the parsed file.
        source: the file, named in every message.

    Returns:
        The :class:`RunLog` of its ``run_log`` section; ``None`` for a version-1 file (no
        section: the caller rebuilds it from the benchmark's own sections, as the job would
        have).

    Raises:
        ValueError: one line naming the file: a newer ``schema_version``
            (:func:`check_version`), a version-2 file without the section, or a section
            that does not match the schema (the first field that does not, and why).
    """
    version = check_version(summary, source)
    section = summary.get("run_log")
    if section is None:
        if version >= RUN_LOG_VERSION:
            raise ValueError(f"{source}: summary.json schema_version {version} has no "
                             "run_log section")
        return None
    try:
        return RunLog.model_validate(section)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        raise ValueError(f"{source}: run_log.{where}: {first['msg']}") from None


__all__ = [
    "RUN_LOG_VERSION",
    "Figure",
    "GroupResult",
    "InputFile",
    "JudgeSpend",
    "MetricResult",
    "RunLog",
    "RunSpec",
    "TrustBrief",
    "Unit",
    "check_version",
    "judge_spend",
    "read_run_log",
    "run_log_schema",
    "schema_text",
]
