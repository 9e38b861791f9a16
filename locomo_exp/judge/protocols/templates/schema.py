"""A judge template file: read, validated and described (``judge.template=FILE.yaml``).

The project ships no published harness's prompt. A user keeps their own copy of one in a
small YAML file; this module reads it into a :class:`JudgeTemplate`, checking every key
before any call or write. Each problem is one line naming the file and the key, e.g.
``judge.template=my.yaml: unknown key 'lables' (did you mean 'labels'?)``.

The file's keys (docs/judge.md, "Judge prompts from your own files"):

* ``name``, ``version`` (required): written into every output with the file's sha256.
* ``system`` (optional): sent as written; ``user``: the user message, with placeholders in
  Python ``str.format`` syntax (``{question}``, literal braces as ``{{``/``}}``), or
  ``by_kind``: one user text per kind of question (LoCoMo category id or label,
  or a plug-in benchmark's own kind key, e.g. a question type or ``abstention``), ``user``
  then being the fallback.
* ``fields``: the template's own placeholder names in this project's terms
  (``generated_answer: predicted_answer``), and ``positional: [question, gold_answer,
  predicted_answer]`` for ``{}`` slots.
* one verdict rule (:mod:`.verdicts`): ``json_key`` with ``labels`` or ``score_range``;
  ``contains`` (with an optional ``otherwise``); or ``regex`` with ``labels`` or
  ``score_range`` (optional ``otherwise``).
* ``response_format`` (``text``, ``json_object``, ``json_schema``; ``json_schema`` may give
  the schema), ``on_unparsed`` (``unscored`` or ``{score: N}``), ``escape_untrusted``
  (default true), and the settings a harness fixed: ``temperature``, ``max_tokens``,
  ``model``.

YAML is read with YAML 1.2 booleans: only ``true``/``false`` are booleans, so ``yes``, ``no``,
``on`` and ``off`` stay words (``contains: {yes: 100}`` means the word "yes").
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from locomo_exp.judge.protocols.templates.checks import (
    known_kinds,
    normalize_kind,
    placeholder_problem,
    placeholders,
    suggest_field,
)
from locomo_exp.judge.protocols.templates.verdicts import VerdictRule

OUR_FIELDS = ("question", "gold_answer", "predicted_answer", "category", "category_name")
"""The values a template can place, in this project's terms."""

ANSWER_FIELDS = ("gold_answer", "predicted_answer")
"""Fields every user text must place: without them the judge sees no answer to grade."""

RESPONSE_FORMATS = ("text", "json_object", "json_schema")
"""Reply formats a template may ask for (each provider maps them to its API's field)."""

KNOWN_KEYS = (
    "name", "version", "description", "system", "user", "by_kind", "fields", "positional",
    "response_format", "json_schema", "json_key", "labels", "score_range", "contains",
    "otherwise", "regex", "on_unparsed", "escape_untrusted", "temperature", "max_tokens",
    "model",
)  # fmt: skip
"""Every key a template file may have."""


SHIPPED_DIR = Path(__file__).resolve().parents[3] / "conf" / "templates"
"""Example templates shipped with the package, in the project's own words."""


def shipped_templates() -> list[str]:
    """Names of the shipped example templates (``judge.template=<name>``), sorted."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.yaml"))


def resolve_template_path(value: str | Path) -> Path:
    """The file ``judge.template`` names: a path, or the name of a shipped example.

    A value that is not an existing file and has no directory part or suffix is looked up
    as ``locomo_exp/conf/templates/<name>.yaml``.
    """
    path = Path(value).expanduser()
    if path.exists() or path.parent != Path(".") or path.suffix:
        return path
    shipped = SHIPPED_DIR / f"{path.name}.yaml"
    return shipped if shipped.is_file() else path


class TemplateError(ValueError):
    """A template file that cannot be used: one line naming the file and the key."""


class _DuplicateKey(Exception):
    """A key given twice in one YAML map (YAML would keep only the later value)."""

    def __init__(self, key: Any, first: int, again: int) -> None:
        super().__init__(
            f"duplicate key '{key}' at line {again} (first at line {first}); YAML would "
            "silently keep only the later one"
        )


class _Loader(yaml.SafeLoader):  # type: ignore[misc]
    """SafeLoader with YAML 1.2 booleans (``yes``/``no``/``on``/``off`` stay strings).

    A key given twice in one map raises :class:`_DuplicateKey` instead of the later value
    silently replacing the first.
    """

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """The map of ``node``, refusing a key given twice (merge keys ``<<`` aside)."""
        lines: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in lines:
                    raise _DuplicateKey(key, lines[key], line)
                lines[key] = line
            except TypeError:  # an unhashable key: SafeLoader names it
                continue
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


@dataclass(frozen=True)
class UserText:
    """One user text of a template, with its placeholders resolved to our fields.

    Attributes:
        text: the text as written in the file.
        named: the template's placeholder name -> our field.
        positional: our field for each ``{}`` / ``{0}`` slot, in order.
    """

    text: str
    named: Mapping[str, str]
    positional: tuple[str, ...] = ()

    def fill(self, values: Mapping[str, str]) -> str:
        """The text with every placeholder replaced (Python ``str.format``).

        Args:
            values: our field -> text (:data:`OUR_FIELDS`).

        Returns:
            The filled user message.
        """
        args = [values[f] for f in self.positional]
        kwargs = {name: values[ours] for name, ours in self.named.items()}
        return self.text.format(*args, **kwargs)


@dataclass(frozen=True)
class JudgeTemplate:
    """A validated judge template.

    Attributes:
        path: the file read.
        sha256: hex digest of the file's bytes (cache key, card, MLflow, report).
        name: the template's ``name``.
        version: its ``version`` (text).
        system: the system prompt, sent as written ("" for none).
        user: the fallback user text, or ``None`` when every kind has its own.
        by_kind: kind -> user text (keys as written, compared as lower-case text).
        rule: how the reply is read.
        response_format: ``text``, ``json_object`` or ``json_schema``.
        json_schema: the schema sent with ``json_schema`` (given or derived from the rule).
        unparsed_score: score (0-100) given to a reply no rule reads, or ``None``
            (unscored, the default).
        escape_untrusted: escape ``&``, ``<``, ``>`` in the question and answers.
        temperature: the temperature the harness fixed (``None``: not fixed).
        temperature_fixed: whether the file sets ``temperature`` (``null`` means send none).
        max_tokens: the harness's output limit, or ``None``.
        model: the harness's judge model id, or ``None``.
    """

    path: Path
    sha256: str
    name: str
    version: str
    system: str
    user: UserText | None
    by_kind: Mapping[str, UserText]
    rule: VerdictRule
    response_format: Literal["text", "json_object", "json_schema"] = "text"
    json_schema: Mapping[str, Any] | None = None
    unparsed_score: float | None = None
    escape_untrusted: bool = True
    temperature: float | None = None
    temperature_fixed: bool = False
    max_tokens: int | None = None
    model: str | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)

    @property
    def prompt_version(self) -> str:
        """``template:<name>@<version>#<first 12 hex of sha256>`` (written into every output)."""
        return f"template:{self.name}@{self.version}#{self.sha256[:12]}"

    def user_text(self, kinds: list[str]) -> UserText | None:
        """The user text of the first of ``kinds`` that ``by_kind`` names, else ``user``."""
        lowered = {normalize_kind(k): v for k, v in self.by_kind.items()}
        for kind in kinds:
            if normalize_kind(kind) in lowered:
                return lowered[normalize_kind(kind)]
        return self.user


def _fail(path: Path, message: str) -> TemplateError:
    return TemplateError(f"judge.template={path}: {message}")


def _user_text(
    path: Path, where: str, text: Any, named: Mapping[str, str], positional: tuple[str, ...]
) -> UserText:
    if not isinstance(text, str) or not text.strip():
        raise _fail(path, f"{where} must be non-empty text")
    try:
        fields = placeholders(text)
    except ValueError as exc:
        raise _fail(path, f"{where}: {exc} (write a literal brace as {{{{ or }}}})") from None
    names = [f.name for f in fields]
    used: set[str] = set()
    auto = 0
    for name in names:
        if name == "" or name.isdigit():
            index = auto if name == "" else int(name)
            auto += name == ""
            if index >= len(positional):
                raise _fail(
                    path,
                    f"{where}: positional placeholder {{{name}}} (slot {index}) has no field; "
                    "map the slots with fields: {positional: [question, gold_answer, "
                    "predicted_answer]}",
                )
            used.add(positional[index])
            continue
        ours = named.get(name)
        if ours is None:
            guess = suggest_field(name)
            target = guess or f"<one of {', '.join(OUR_FIELDS)}>"
            mapping = f"({name}: {target})"
            raise _fail(
                path,
                f"{where}: unmapped placeholder {{{name}}}; use one of "
                f"{', '.join('{' + f + '}' for f in OUR_FIELDS)}, map it in fields: "
                f"{mapping}, or write literal braces as {{{{ }}}}",
            )
        used.add(ours)
    problem = placeholder_problem(fields)
    if problem:
        raise _fail(path, f"{where}: {problem}")
    missing = [f for f in ANSWER_FIELDS if f not in used]
    if missing:
        raise _fail(path, f"{where} does not place {' or '.join(missing)}")
    return UserText(text, {n: named[n] for n in names if n in named}, positional)


def _field_map(path: Path, raw: Mapping[str, Any]) -> tuple[dict[str, str], tuple[str, ...]]:
    fields = raw.get("fields") or {}
    if not isinstance(fields, Mapping):
        raise _fail(path, "fields must be a map of placeholder -> field (generated_answer: "
                    "predicted_answer)")
    fields = dict(fields)
    positional = fields.pop("positional", None)
    if raw.get("positional") is not None:
        if positional is not None:
            raise _fail(path, "give positional once (top level or under fields)")
        positional = raw["positional"]
    named = {f: f for f in OUR_FIELDS}
    for name, ours in fields.items():
        if ours not in OUR_FIELDS:
            raise _fail(path, f"fields.{name}: {ours!r} is not one of {', '.join(OUR_FIELDS)}")
        named[str(name)] = str(ours)
    slots: tuple[str, ...] = ()
    if positional is not None:
        if not isinstance(positional, list) or any(p not in OUR_FIELDS for p in positional):
            raise _fail(path, f"positional must be a list of {', '.join(OUR_FIELDS)}")
        slots = tuple(str(p) for p in positional)
    return named, slots


def _number(path: Path, key: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise _fail(path, f"{key}={value!r} must be a number in [{low:g}, {high:g}]")
    return float(value)


def _settings(path: Path, raw: Mapping[str, Any]) -> dict[str, Any]:
    fixed: dict[str, Any] = {}
    if "temperature" in raw:
        t = raw["temperature"]
        fixed["temperature"] = None if t is None else _number(path, "temperature", t, 0.0, 2.0)
    if raw.get("max_tokens") is not None:
        m = raw["max_tokens"]
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise _fail(path, f"max_tokens={m!r} must be a whole number >= 1")
        fixed["max_tokens"] = m
    if raw.get("model") is not None:
        if not isinstance(raw["model"], str) or not raw["model"].strip():
            raise _fail(path, "model must be a model id")
        fixed["model"] = raw["model"].strip()
    return fixed


def _unparsed(path: Path, value: Any) -> float | None:
    if value is None or value == "unscored":
        return None
    if isinstance(value, Mapping) and set(value) == {"score"}:
        return _number(path, "on_unparsed.score", value["score"], 0.0, 100.0)
    raise _fail(path, f"on_unparsed={value!r} must be 'unscored' or {{score: N}} (0-100)")


def parse_template(raw: Any, path: Path, sha256: str) -> JudgeTemplate:
    """Validate a template's parsed YAML.

    Args:
        raw: the YAML document (must be a map).
        path: the file (named in errors).
        sha256: hex digest of the file's bytes.

    Returns:
        The :class:`JudgeTemplate`.

    Raises:
        TemplateError: one line naming the file and the first problem.
    """
    if not isinstance(raw, Mapping):
        raise _fail(path, "must be a YAML map with name, version, user and a verdict rule")
    for key in raw:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(str(key), KNOWN_KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise _fail(path, f"unknown key '{key}'{hint}")
    for key in ("name", "version"):
        if raw.get(key) is None or not str(raw[key]).strip():
            raise _fail(path, f"missing '{key}'")
    if raw.get("user") is None and not raw.get("by_kind"):
        raise _fail(path, "missing 'user' (the user message with {question}, {gold_answer}, "
                    "{predicted_answer}) or 'by_kind'")
    system = raw.get("system") or ""
    if not isinstance(system, str):
        raise _fail(path, "system must be text")
    named, positional = _field_map(path, raw)
    user = None
    if raw.get("user") is not None:
        user = _user_text(path, "user", raw["user"], named, positional)
    by_kind_raw = raw.get("by_kind") or {}
    if not isinstance(by_kind_raw, Mapping):
        raise _fail(path, "by_kind must be a map of kind -> user text")
    kinds = {normalize_kind(k) for k in known_kinds()}
    for kind in by_kind_raw:
        if normalize_kind(str(kind)) not in kinds:
            close = difflib.get_close_matches(str(kind), known_kinds(), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise _fail(path, f"by_kind.{kind}: no question has this kind ({hint}kinds: "
                        f"{', '.join(known_kinds())})")  # fmt: skip
    by_kind = {
        str(kind): _user_text(path, f"by_kind.{kind}", text, named, positional)
        for kind, text in by_kind_raw.items()
    }
    rule = VerdictRule.from_yaml(raw, lambda message: _fail(path, message))
    response_format = raw.get("response_format", "text")
    if response_format not in RESPONSE_FORMATS:
        raise _fail(path, f"response_format={response_format!r} must be one of "
                    f"{', '.join(RESPONSE_FORMATS)}")
    schema = raw.get("json_schema")
    if schema is not None and (response_format != "json_schema" or not isinstance(schema, Mapping)):
        raise _fail(path, "json_schema (a map) goes with response_format: json_schema")
    if response_format == "json_schema" and schema is None:
        schema = rule.json_schema()
        if schema is None:
            raise _fail(path, "response_format: json_schema needs json_key, or a json_schema map")
    escape = raw.get("escape_untrusted", True)
    if not isinstance(escape, bool):
        raise _fail(path, f"escape_untrusted={escape!r} must be true or false")
    fixed = _settings(path, raw)
    return JudgeTemplate(
        path=path,
        sha256=sha256,
        name=str(raw["name"]).strip(),
        version=str(raw["version"]).strip(),
        system=system,
        user=user,
        by_kind=by_kind,
        rule=rule,
        response_format=response_format,
        json_schema=schema,
        unparsed_score=_unparsed(path, raw.get("on_unparsed")),
        escape_untrusted=escape,
        temperature=fixed.get("temperature"),
        temperature_fixed="temperature" in fixed,
        max_tokens=fixed.get("max_tokens"),
        model=fixed.get("model"),
        fixed=fixed,
    )


def load_template(path: str | Path) -> JudgeTemplate:
    """Read and validate a template file.

    Args:
        path: the YAML file (``judge.template``), or the name of a shipped example
            (:func:`resolve_template_path`).

    Returns:
        The :class:`JudgeTemplate` (``sha256`` of the file's bytes).

    Raises:
        TemplateError: one line naming the file and the problem (missing, not YAML,
            unknown key, unmapped placeholder, no verdict rule, ...).
    """
    file = resolve_template_path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        shipped = ", ".join(shipped_templates()) or "none"
        raise _fail(
            file, f"cannot be read ({exc.strerror or exc}); shipped examples: {shipped}"
        ) from None
    try:
        raw = yaml.load(data.decode("utf-8"), Loader=_Loader)  # noqa: S506 - a SafeLoader
    except UnicodeDecodeError:
        raise _fail(file, "is not UTF-8 text") from None
    except _DuplicateKey as exc:
        raise _fail(file, str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise _fail(
            file,
            f"is not valid YAML{where}: {problem} (a text starting with {{ must be quoted or "
            "written as a | block)",
        ) from None
    return parse_template(raw, file, hashlib.sha256(data).hexdigest())
