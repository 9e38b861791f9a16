"""What an API key looks like, and where a resolved config value would carry one.

Three checks, used by :mod:`locomo_exp.config.secrets` on the command line (before Hydra
writes anything) and on the composed, resolved config (before the job writes anything):

* :func:`looks_like_key` -- a value holding a key of a known vendor's form (a prefix such as
  ``sk-``, ``gsk_``, ``xai-``, ``AIza`` followed by the key's body; :data:`KEY_FORMS`). The
  forms are the vendors' published key formats; a body must be long enough that an ordinary
  word (``sk-runs``, ``hf_datasets_v2``) is not taken for a key.
* :func:`key_shaped_name` -- a value that cannot be an environment variable's *name*: not
  letters, digits and ``_`` (no leading digit), or a known key, or a random-looking part (a
  run of 20 or more letters and digits mixing both, or any run of 32 or more): a name such as
  ``GROQ_API_KEY`` has short, word-like parts; a pasted key has one long random part.
* :func:`credential_variables` -- the environment variables that hold a credential (a name
  ending in ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``, ``CREDENTIALS``), whose values
  must not reach a saved config through ``${oc.env:...}``.

Nothing here repeats a value in a message: the callers name the setting, never its value.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator, Mapping
from enum import Enum
from typing import Any

KEY_FORMS: tuple[tuple[str, str], ...] = (
    ("OpenAI, Anthropic, DeepSeek, OpenRouter", r"sk-[A-Za-z0-9_-]{20,}"),
    ("Stripe-style, ElevenLabs", r"[sr]k_(?:live_|test_)?[A-Za-z0-9]{20,}"),
    ("Langfuse public", r"pk-lf-[A-Za-z0-9-]{20,}"),
    ("Groq", r"gsk_[A-Za-z0-9]{20,}"),
    ("xAI", r"xai-[A-Za-z0-9]{20,}"),
    ("Google API", r"AIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth", r"ya29\.[0-9A-Za-z_-]{20,}"),
    ("Hugging Face", r"hf_[A-Za-z0-9]{30,}"),
    ("Replicate", r"r8_[A-Za-z0-9]{30,}"),
    ("Perplexity", r"pplx-[A-Za-z0-9]{20,}"),
    ("NVIDIA", r"nvapi-[A-Za-z0-9_-]{20,}"),
    ("Cerebras", r"csk-[A-Za-z0-9]{20,}"),
    ("Fireworks", r"fw_[A-Za-z0-9]{20,}"),
    ("Together", r"tgp_v1_[A-Za-z0-9_-]{20,}"),
    ("GitHub", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("GitLab", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("Slack", r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("AWS access key id", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("JSON Web Token", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}"),
)
"""``(vendor, regular expression)`` of each recognised key form (case-sensitive)."""

KEY_VALUE_RE = re.compile(
    r"(?<![A-Za-z0-9_-])(?:" + "|".join(form for _, form in KEY_FORMS) + ")"
)
"""A key of any form of :data:`KEY_FORMS` inside a value, not inside a longer word."""

ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""An environment variable's name (POSIX: letters, digits and ``_``, no leading digit)."""

_RANDOM_MIXED = 20
"""A run of this many letters and digits, mixing both, is a key's body, not a name's part."""

_RANDOM_ANY = 32
"""A run of this many letters and digits is a key's body, whatever it holds."""

CREDENTIAL_ENV_RE = re.compile(
    r"(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE
)
"""An environment variable's name that says it holds a credential (``ANTHROPIC_API_KEY``,
``HF_TOKEN``, ``MLFLOW_TRACKING_PASSWORD``)."""

MIN_SECRET_CHARS = 8
"""A credential variable's value shorter than this is not looked for in config values (``1``
or ``yes`` would match everywhere)."""

ENV_REFERENCE_RE = re.compile(r"\$\{\s*oc\.env\s*:\s*([A-Za-z_][A-Za-z0-9_]*)")
"""An OmegaConf ``${oc.env:NAME}`` (or ``${oc.env:NAME,default}``) interpolation; group 1 is
the variable's name."""


def looks_like_key(value: str) -> bool:
    """Whether ``value`` holds a key of a known vendor's form (:data:`KEY_FORMS`)."""
    return KEY_VALUE_RE.search(value) is not None


def _random_part(part: str) -> bool:
    """Whether a run of letters and digits is random-looking: long, or long and mixed."""
    if len(part) >= _RANDOM_ANY:
        return True
    mixed = any(c.isdigit() for c in part) and any(c.isalpha() for c in part)
    return len(part) >= _RANDOM_MIXED and mixed


def key_shaped_name(value: str) -> bool:
    """Whether ``value`` cannot be the name of the variable holding a key.

    Args:
        value: a ``judge.api_key_env`` value (``""``: not checked here).

    Returns:
        ``True`` when ``value`` is not letters, digits and ``_`` with no leading digit, or
        holds a known key (:func:`looks_like_key`), or has a random-looking part between
        ``_`` (20 or more letters and digits mixing both, or 32 or more of any): a name such
        as ``GROQ_API_KEY`` or ``AZURE_OPENAI_KEY_EASTUS2`` has short parts.
    """
    if not ENV_NAME_RE.match(value):
        return True
    return looks_like_key(value) or any(_random_part(part) for part in value.split("_"))


def credential_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment's credential variables (:data:`CREDENTIAL_ENV_RE`) with usable values.

    Args:
        environ: the environment (default ``os.environ``).

    Returns:
        ``{name: value}`` for each variable whose name says it holds a credential and whose
        value has at least :data:`MIN_SECRET_CHARS` characters.
    """
    env = os.environ if environ is None else environ
    return {
        name: value
        for name, value in env.items()
        if CREDENTIAL_ENV_RE.search(name) and len(value.strip()) >= MIN_SECRET_CHARS
    }


def env_reference_is_secret(name: str, extra: tuple[str, ...] = ()) -> bool:
    """Whether ``${oc.env:name}`` would read a credential.

    Args:
        name: the variable's name.
        extra: more names that hold a key (``judge.api_key_env``'s value).

    Returns:
        ``True`` for a credential's name (:data:`CREDENTIAL_ENV_RE`), a name in ``extra``,
        or a variable whose current value holds a known key.
    """
    if CREDENTIAL_ENV_RE.search(name) or name in extra:
        return True
    return looks_like_key(os.environ.get(name, ""))


def string_leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted key, text)`` of every string in a config (dataclasses, dicts, lists).

    Args:
        value: a typed config (dataclass instances), or dicts and lists of them.
        prefix: the dotted key of ``value`` (``""`` at the root).

    Yields:
        e.g. ``("judge.model", "claude-sonnet-4-6")``, ``("data.path[1]", "b.json")``.
    """
    if isinstance(value, Enum):
        return
    if isinstance(value, str):
        yield prefix, value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from string_leaves(getattr(value, field.name), _join(prefix, field.name))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from string_leaves(item, _join(prefix, str(key)))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from string_leaves(item, f"{prefix}[{index}]")


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def resolved_secret_problems(config: Any, environ: Mapping[str, str] | None = None) -> list[str]:
    """The settings of a resolved config that carry a key, one line each, values not repeated.

    A key reaches a resolved config from a config file, or through an interpolation such as
    ``tracking.run_name=${oc.env:ANTHROPIC_API_KEY}``; the run would write it to
    ``config.yaml``, the card, the report and MLflow (the run's name included).

    Args:
        config: the composed config with every interpolation resolved (dataclasses).
        environ: the environment (default ``os.environ``).

    Returns:
        e.g. ``["judge.model=...: its value looks like an API key"]``,
        ``["tracking.run_name=...: holds the value of ANTHROPIC_API_KEY (a credential's
        environment variable)"]``; empty when no setting carries one.
    """
    secrets = credential_variables(environ)
    problems = []
    for key, text in string_leaves(config):
        if looks_like_key(text):
            problems.append(f"{key}=...: its value looks like an API key")
            continue
        holders = sorted(name for name, secret in secrets.items() if secret in text)
        if holders:
            problems.append(
                f"{key}=...: holds the value of {', '.join(holders)} (a credential's "
                "environment variable)"
            )
    return problems


__all__ = [
    "CREDENTIAL_ENV_RE",
    "ENV_NAME_RE",
    "ENV_REFERENCE_RE",
    "KEY_FORMS",
    "KEY_VALUE_RE",
    "credential_variables",
    "env_reference_is_secret",
    "key_shaped_name",
    "looks_like_key",
    "resolved_secret_problems",
    "string_leaves",
]
