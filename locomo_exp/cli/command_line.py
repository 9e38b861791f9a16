"""The command line before Hydra runs, and the one form of every refusal.

:func:`check_command_line` refuses an API key, a malformed override, an unknown key or
group choice and a value of the wrong type, each in one line, before Hydra writes
anything; :func:`fail` prints that line and exits 1.
"""

from __future__ import annotations

import re
import sys
from typing import NoReturn

from hydra.core.hydra_config import HydraConfig
from omegaconf.errors import OmegaConfBaseException

from locomo_exp.config.checks import UnknownConfigKeyError


def task_overrides() -> list[str]:
    """The job's command-line overrides as typed (``${...}`` inside them not resolved)."""
    from omegaconf import OmegaConf

    task = OmegaConf.to_container(HydraConfig.get().overrides.task, resolve=False)
    return [str(o) for o in task] if isinstance(task, list) else []


def key_overrides(argv: list[str]) -> str | None:
    """The refusal of an API key on the command line, or ``None`` when there is none.

    Checked before Hydra runs: Hydra would already have copied the key into
    ``.hydra/config.yaml``, ``hydra.yaml`` and ``overrides.yaml`` by the time the config
    is validated. The key itself is never repeated. The rules (a key's name, or a value
    that looks like a key) are :func:`locomo_exp.config.secrets.key_override_problem`'s.

    Args:
        argv: the command-line arguments after the program name.

    Returns:
        One line naming the override's key and where a key goes instead.
    """
    from locomo_exp.config.secrets import key_override_problem

    return key_override_problem(argv)


def check_command_line(argv: list[str]) -> None:
    """Refuse unknown keys and group choices before Hydra composes, in one line each.

    Hydra would answer ``judge.run=3`` with its advice to write ``+judge.run=3`` (which
    the project refuses too); this prints ``error: unknown config key(s): judge.run (did
    you mean judge.runs?)`` and exits 1 instead.

    Args:
        argv: the command-line arguments after the program name.

    An API key given as an override (``judge.api_key=...``, ``+judge.api_key=...``) is
    refused first (:func:`key_overrides`), before Hydra writes anything.

    Raises:
        SystemExit: with status 1 when a key or a group choice (``scorer=f2``) is unknown,
            or an API key is given.
    """
    from locomo_exp.config.checks import unknown_group_options, unknown_override_keys
    from locomo_exp.config.override_syntax import override_syntax_problems
    from locomo_exp.config.override_values import wrong_value_types
    from locomo_exp.judge.protocols.templates.settings import command_line_template_problems

    secret = key_overrides(argv)
    if secret:
        fail(secret)
    syntax = override_syntax_problems(argv)
    if syntax:
        fail("; ".join(syntax))
    unknown = unknown_override_keys(argv)
    if unknown:
        fail(UnknownConfigKeyError(unknown))
    wrong_choices = unknown_group_options(argv) + wrong_value_types(argv)
    if wrong_choices:
        fail("; ".join(wrong_choices))
    template_problems = command_line_template_problems(argv)  # before Hydra writes anything
    if template_problems:
        fail("; ".join(template_problems))


def fail(message: object) -> NoReturn:
    """Print ``error: <message>`` on standard error and exit with status 1: every refusal's form.

    Raises:
        SystemExit: always, with status 1.
    """
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(1) from None  # called in an except block: no chained traceback


def config_error_line(error: OmegaConfBaseException) -> str:
    """One line for an OmegaConf error: the key, then the first line of its message.

    ``${oc.env:X}`` with ``X`` unset gives ``data.path: environment variable 'X' is not
    set (from ${oc.env:X})``.
    """
    key = getattr(error, "full_key", None) or "config"
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    missing_env = re.search(r"Environment variable '([^']+)' not found", message)
    if missing_env:
        name = missing_env.group(1)
        message = f"environment variable '{name}' is not set (from ${{oc.env:{name}}})"
    return f"{key}: {message}"


__all__ = [
    "check_command_line",
    "config_error_line",
    "fail",
    "key_overrides",
    "task_overrides",
]
