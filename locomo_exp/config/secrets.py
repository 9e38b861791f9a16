"""API keys kept off the command line: overrides whose name or value carries a key.

A key typed as an override would be copied by Hydra into ``.hydra/config.yaml``,
``hydra.yaml`` and ``overrides.yaml``, and by this project into the card, the report's
"Command:" line and MLflow. Keys are read from the environment only (``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``, or the variable named by ``judge.api_key_env``), so the command line is
checked before Hydra runs, by name and by value:

* a name whose last dotted part is a key or token name (``judge.api_key``,
  ``+hydra.job.env_set.OPENAI_API_KEY``, ``judge.auth_token``); names that only end in
  ``_key`` (``data.records_key``) or name a variable (``judge.api_key_env``) are not;
* a value holding an OpenAI or Anthropic secret key: ``sk-`` followed by at least 20
  letters, digits, ``-`` or ``_`` (both vendors' keys have this form; e.g. a key pasted
  into ``judge.api_key_env`` instead of the variable's name).
"""

from __future__ import annotations

import re

KEY_NAME_RE = re.compile(
    r"(?:^|[._])(?:api_?key|auth_?token|api_?token|access_?token|secret_?key|client_?secret)$",
    re.IGNORECASE,
)
"""The last dotted part of an override name that holds a credential."""

KEY_VALUE_RE = re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}")
"""A secret key of the OpenAI or Anthropic form inside a value."""

_PREFIX_RE = re.compile(r"^[+~]{0,2}")


def key_override_problem(argv: list[str]) -> str | None:
    """The refusal of an API key given on the command line, or ``None`` when there is none.

    Args:
        argv: the command-line arguments after the program name.

    Returns:
        One line naming the first override that carries a key (its name only: the key
        itself is never repeated) and where a key goes instead.
    """
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        name, value = arg.split("=", 1)
        last = _PREFIX_RE.sub("", name).rsplit(".", 1)[-1]
        if KEY_NAME_RE.search(last):
            reason = "an API key is never accepted on the command line"
        elif KEY_VALUE_RE.search(value):
            reason = (
                "its value looks like an API key (sk-...), which is never accepted on the "
                "command line"
            )
        else:
            continue
        return (
            f"{name}=...: {reason} (it would be written to the run's saved config, card and "
            "report); export it in its environment variable (ANTHROPIC_API_KEY, "
            "OPENAI_API_KEY, or the one named by judge.api_key_env)"
        )
    return None
