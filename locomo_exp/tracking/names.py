"""MLflow names and values: legal metric/param names, one param stringification, no secrets.

Pure functions (no MLflow import): every name the project logs passes through
:func:`metric_name`, every param value through :func:`format_param`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

MAX_PARAM_VALUE_CHARS = 6000
"""MLflow truncates longer param values; we cut them ourselves, marking the cut."""

_SECRET_KEY_RE = re.compile(r"(api[_-]?key|secret|token|password|authorization)$", re.IGNORECASE)
_ILLEGAL_NAME_CHARS_RE = re.compile(r"[^A-Za-z0-9_\-. /:]")


def is_secret_key(name: str) -> bool:
    """Whether a config key looks like a secret (``api_key``, ``token``, ...); never logged."""
    return bool(_SECRET_KEY_RE.search(name.rsplit(".", 1)[-1]))


def metric_name(name: str) -> str:
    """Replace characters MLflow refuses in metric/param names with ``_`` (max 250 chars)."""
    return _ILLEGAL_NAME_CHARS_RE.sub("_", name)[:250]


def finite_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Keep only numeric, finite metrics, with legal names (never log NaN or inf).

    Args:
        metrics: name -> value; ``None``, NaN, inf and non-numbers are dropped.

    Returns:
        name -> float.
    """
    kept: dict[str, float] = {}
    for name, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(value):
            kept[metric_name(name)] = float(value)
    return kept


def flatten_params(tree: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten a nested config into ``{"a.b.c": "value"}`` with one stringification.

    Keys that look like secrets (``api_key``, ``token``, ...) are left out.

    Args:
        tree: nested dicts/lists of plain values (e.g. ``OmegaConf.to_container``).
        prefix: key prefix for recursion.

    Returns:
        Flat param dict; values longer than :data:`MAX_PARAM_VALUE_CHARS` are cut.
    """
    flat: dict[str, str] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if _SECRET_KEY_RE.search(str(key)):
            continue
        if isinstance(value, Mapping) and value:
            flat.update(flatten_params(value, f"{name}."))
            continue
        text = format_param(value)
        if len(text) > MAX_PARAM_VALUE_CHARS:
            text = text[: MAX_PARAM_VALUE_CHARS - 15] + "...[truncated]"
        flat[metric_name(name)] = text
    return flat


_DECIMAL_RE = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NOISE_DIGITS = 16
"""A decimal with this many significant digits is taken as float noise from arithmetic."""


def clean_float_text(text: str) -> str:
    """Undo binary floating-point noise in a decimal written by a program.

    Hydra's float ``range()`` sweeps compute values such as ``0.7000000000000001`` and
    ``0.8999999999999999`` (docs/field_notes.md §6). A decimal with 16 or more significant digits
    is rewritten with 15 (``0.7``, ``0.9``); anything shorter, and every non-decimal
    text, is returned unchanged, so what a user typed (``0.50``, ``1e-3``) stays as typed.

    Args:
        text: a value as text.

    Returns:
        The text, or its 15-significant-digit form when it was float noise.
    """
    stripped = text.strip()
    if not _DECIMAL_RE.match(stripped):
        return text
    mantissa = re.split(r"[eE]", stripped)[0]
    digits = re.sub(r"\D", "", mantissa).lstrip("0")
    if len(digits) < _NOISE_DIGITS:
        return text
    return repr(float(format(float(stripped), ".15g")))


def format_param(value: Any) -> str:
    """The one stringification used for every param value.

    Enums give their value, floats their shortest round-trip ``repr`` (so ``0.3`` stays
    ``0.3``) with float noise removed by :func:`clean_float_text` (a ``range()`` sweep's
    ``0.7000000000000001`` is logged as ``0.7``), ``None`` gives ``"null"``; lists and
    dicts are written as JSON-like text.
    """
    if hasattr(value, "value") and not isinstance(value, (int, float, str)):
        value = value.value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return clean_float_text(repr(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_param(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {format_param(v)}" for k, v in value.items()) + "}"
    return str(value)
