"""What the judge knows about its model: the preset's ``judge.model_info``, if it applies.

There is no table of models in Python: each preset (``conf/judge/<preset>.yaml``) states
its model's price and whether it accepts structured outputs and a temperature
(docs/field_notes.md §4: Opus 4.7 and later reject any temperature). A model no preset describes
(``judge.model=<any id>``) is assumed to accept both, and its cost is not estimated.
"""

from __future__ import annotations

import re

from locomo_exp.config import JudgeConfig, JudgeModelInfo

_DATED_ID_RE = re.compile(r"^(.+?)-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def model_info(cfg: JudgeConfig) -> JudgeModelInfo | None:
    """``judge.model_info`` when it describes ``judge.model``, else ``None``.

    It does when its ``id`` is null, equals the model id, or equals the model id without
    a date suffix (``claude-sonnet-4-5-20250929`` -> ``claude-sonnet-4-5``,
    ``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``).

    Args:
        cfg: the judge config.

    Returns:
        The model info, or ``None`` for a model the preset does not describe.
    """
    info = cfg.model_info
    if info is None:
        return None
    if info.id is None:
        return info
    model = str(cfg.model or "").strip()
    dated = _DATED_ID_RE.match(model)
    if info.id == model or (dated is not None and dated.group(1) == info.id):
        return info
    return None


def uses_structured_output(cfg: JudgeConfig) -> bool:
    """Whether calls carry a JSON schema: ``judge.structured_output`` and the model supports it.

    Args:
        cfg: the judge config.

    Returns:
        False when switched off or when ``judge.model_info.structured_output`` is false
        for this model; True otherwise (an undescribed model is assumed to support it).
    """
    info = model_info(cfg)
    return bool(cfg.structured_output) and (info is None or bool(info.structured_output))


def accepts_temperature(cfg: JudgeConfig) -> bool:
    """Whether the model accepts a ``temperature``.

    ``judge.model_info.temperature``; True for a model no preset describes.
    """
    info = model_info(cfg)
    return info is None or bool(info.temperature)


def prompt_limit(cfg: JudgeConfig) -> int | None:
    """The most input tokens a prompt may have: the setting, else the model's context window.

    Args:
        cfg: the judge config.

    Returns:
        ``judge.max_prompt_tokens`` when set; else the preset's
        ``judge.model_info.context_tokens`` for the model it describes (gpt-4.1 family
        1,047,576; gpt-4o family 128,000; Claude 200,000); ``None`` when neither is known
        (an ``openai-compatible`` server, a model no preset describes).
    """
    if cfg.max_prompt_tokens is not None:
        return int(cfg.max_prompt_tokens)
    info = model_info(cfg)
    if info is None or info.context_tokens is None:
        return None
    return int(info.context_tokens)


def model_price(cfg: JudgeConfig) -> dict[str, float] | None:
    """The model's list price, ``{"input": ..., "output": ...}`` in USD per million tokens.

    Args:
        cfg: the judge config.

    Returns:
        The price, or ``None`` when the model is not described or a price is null.
    """
    info = model_info(cfg)
    if info is None or info.input_usd_per_mtok is None or info.output_usd_per_mtok is None:
        return None
    return {"input": float(info.input_usd_per_mtok), "output": float(info.output_usd_per_mtok)}
