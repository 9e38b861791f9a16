"""Override values the schema refuses, one line each, before Hydra composes.

Hydra answers a value its merge refuses with "Error merging override ..." and four or
five lines of OmegaConf's internals (``full_key``, ``reference_type``, ``object_type``).
:func:`wrong_value_types` tries each override's value on a copy of the schema's node the
way the merge would, and names the key, the value as typed and what the key takes
instead: ``judge.runs=abc: expected an integer``, ``judge.categories=[1,x]: expected a
list of integers ('x' is not one)``. It also refuses, in one line, the override forms
Hydra refuses for a key the schema defines: ``~judge.runs`` (a setting cannot be
removed) and ``+judge.runs=3`` (the key exists already).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from omegaconf import AnyNode, DictConfig, ListConfig, OmegaConf

from locomo_exp.config.checks import config_groups, parse_overrides, schema_node, schema_tree

_ELEMENT_WORDS = {int: "integers", float: "numbers", str: "strings", bool: "true/false values"}
"""A typed list's element type -> its plural in messages."""

_ELEMENT_ONE = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
"""A typed list's element type -> one element in messages."""


def _expected_leaf(node: Any) -> str:
    """What a typed leaf takes, in words (``"an integer"``, ``"one of a, b"``)."""
    from omegaconf.nodes import BooleanNode, EnumNode, FloatNode, IntegerNode

    if isinstance(node, EnumNode):
        return "one of " + ", ".join(m.name for m in node._metadata.ref_type)
    if isinstance(node, BooleanNode):
        return "true or false"
    if isinstance(node, IntegerNode):
        return "an integer"
    if isinstance(node, FloatNode):
        return "a number"
    return str(getattr(node._metadata.ref_type, "__name__", "another value"))


def _is_structured(node: Any) -> bool:
    return isinstance(node, DictConfig) and dataclasses.is_dataclass(OmegaConf.get_type(node))


def _is_structured_list(node: ListConfig) -> bool:
    """Whether a list's elements are dataclass objects (``judge.audit.controls``)."""
    return dataclasses.is_dataclass(node._metadata.element_type)


def _expected(node: Any, key: str) -> str:
    """What the node at ``key`` takes, in words, ``or null`` where null is allowed."""
    if isinstance(node, ListConfig):
        element = node._metadata.element_type
        if dataclasses.is_dataclass(element):
            fields = ", ".join(f.name for f in dataclasses.fields(element))
            what = f"a list of {{{fields}}} objects"
        else:
            what = f"a list of {_ELEMENT_WORDS.get(element, 'values')}, e.g. [1,2]"
            if element is str:
                what = "a list of strings, e.g. [a,b]"
    elif _is_structured(node):
        first = next(iter(node.keys()), "x")
        what = f"its settings one by one ({key}.{first}=...), not one value"
    else:
        what = _expected_leaf(node)
    return what + (" or null" if node._metadata.optional else "")


def _refused(node: Any, value: Any, key: str) -> str | None:
    """What the merge would say of ``value`` at ``node`` (``"expected ..."``), or ``None``."""
    from omegaconf.errors import OmegaConfBaseException, ValidationError

    if _is_structured(node) and isinstance(value, dict):
        try:  # a mapping is merged key by key, as Hydra does
            OmegaConf.merge(copy.deepcopy(node), value)
        except OmegaConfBaseException as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            inner = getattr(error, "full_key", None)
            return f"{inner}: {first}" if inner else first
        return None
    if isinstance(node, ListConfig) and isinstance(value, list) and _is_structured_list(node):
        return _object_list_refused(node, value, key)
    try:
        copy.deepcopy(node)._set_value(value)
    except ValidationError as error:
        element = getattr(node._metadata, "element_type", None)
        wrong = getattr(error, "value", None)
        why = ""
        if isinstance(node, ListConfig) and wrong is not None and element in _ELEMENT_ONE:
            why = f" ({wrong!r} is not {_ELEMENT_ONE[element]})"
        return f"expected {_expected(node, key)}{why}"
    return None


def _object_list_refused(node: ListConfig, value: list[Any], key: str) -> str | None:
    """What the merge would say of a list of objects (``judge.audit.controls``), or ``None``.

    Hydra merges a list override into a list of dataclass objects (``OmegaConf.update`` with
    ``merge=True``): each mapping becomes one object, key by key, so
    ``[{path: w.json, expected: wrong}]`` is accepted as the docs show it; setting the list
    as a plain value would refuse every mapping.
    """
    from omegaconf.errors import OmegaConfBaseException

    for item in value:
        if not isinstance(item, dict):
            return f"expected {_expected(node, key)} ({item!r} is not one)"
    try:
        copy.deepcopy(node).merge_with(value)
    except OmegaConfBaseException as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return f"expected {_expected(node, key)} ({first})"
    return None


def _typed_values(override: Any) -> list[tuple[Any, str]]:
    """``(value, text as typed)`` of an override, each value of a sweep separately."""
    if override.is_sweep_override():
        values = list(override.sweep_iterator())
        texts = [str(text) for text in override.sweep_string_iterator()]
        return list(zip(values, texts, strict=False))
    return [(override.value(), override.input_line.split("=", 1)[1].strip())]


def wrong_value_types(overrides: list[str]) -> list[str]:
    """Values the schema's types refuse, and forms Hydra refuses for its keys, one line each.

    Sweeps (``judge.runs=1,ten``) are checked value by value; interpolations
    (``${oc.env:X}``) are left to the job; keys the schema does not define, config-group
    choices (``judge=haiku-4-5``) and the free keys of a plain dict (``category_names.7=x``)
    are left to the other checks.

    Args:
        overrides: command-line overrides as typed.

    Returns:
        e.g. ``["judge.runs=ten: expected an integer"]``,
        ``["judge.categories=[1,x]: expected a list of integers, e.g. [1,2] ('x' is not an
        integer)"]``, ``["~judge.runs: a setting cannot be removed; set judge.runs=<value>"]``.
    """
    from hydra.core.override_parser.types import OverrideType

    schema = schema_tree()
    groups = config_groups()
    problems: list[str] = []
    for override in parse_overrides(overrides):
        key = str(override.key_or_group)
        if "/" in key or key.split(".")[0] == "hydra" or override.package is not None:
            continue
        if key in groups:  # a group choice (judge=haiku-4-5): unknown_group_options' check
            continue
        node = schema_node(schema, key)
        if node is None or isinstance(node, AnyNode):
            continue  # an unknown key, or one typed Any (data.path: a path or a list)
        if isinstance(node, DictConfig) and not _is_structured(node):
            continue  # a plain dict: free keys
        if node._get_full_key(None) != key:
            continue  # below a plain dict: free keys
        typed = override.input_line.strip()
        if override.type == OverrideType.DEL:
            problems.append(f"{typed}: a setting cannot be removed; set {key}=<value>")
            continue
        if override.type == OverrideType.ADD:
            problems.append(f"{typed}: {key} exists already; drop the +: {typed[1:]}")
            continue
        for value, text in _typed_values(override):
            if OmegaConf.is_interpolation(node) or (
                isinstance(value, str) and value.startswith("${")
            ):
                continue
            problem = _refused(node, value, key)
            if problem is not None:
                problems.append(f"{key}={text}: {problem}")
    return problems


__all__ = ["wrong_value_types"]
