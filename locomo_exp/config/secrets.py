"""API keys kept off the command line: overrides whose name or value carries a key.

A key typed as an override would be copied by Hydra into ``.hydra/config.yaml``,
``hydra.yaml`` and ``overrides.yaml``, and by this project into the card, the report's
"Command:" line and MLflow. Keys are read from the environment only (``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``, or the variable named by ``judge.api_key_env``), so the command line is
checked before Hydra runs, by name and by value:

* a name whose last dotted part is a key or token name (``judge.api_key``,
  ``+hydra.job.env_set.OPENAI_API_KEY``, ``judge.auth_token``); names that only end in
  ``_key`` (``data.records_key``) or name a variable (``judge.api_key_env``) are not;
* a value holding a key of a known vendor's form (``sk-...``, ``gsk_...``, ``xai-...``,
  ``AIza...``: :data:`locomo_exp.config.key_shapes.KEY_FORMS`);
* ``judge.api_key_env`` whose value cannot be an environment variable's name (not letters,
  digits and ``_``, or a key's shape: :func:`locomo_exp.config.key_shapes.key_shaped_name`;
  ``auto`` and ``null`` pass): a key pasted where the variable's name goes;
* a value reading a credential's variable through ``${oc.env:NAME}`` (``ANTHROPIC_API_KEY``,
  any ``*_KEY`` / ``*_TOKEN`` / ``*_SECRET`` / ``*_PASSWORD``, the variable named by
  ``judge.api_key_env``): the run would write the resolved key to its ``config.yaml``, card
  and MLflow (the run's name included);
* ``judge.base_url`` holding user info (``http://user:password@host``) or a credential in
  its query (``?token=``, ``?api-key=``, ``?key=``: :func:`uri_secret_spans`): the
  credential goes in the key's variable (a base URL from the provider's own variable,
  ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``, is only ever written without its query:
  ``summary.json``'s endpoint, the card, MLflow);
* ``tracking.uri`` holding a password or token (:func:`uri_secret_spans`: a password after
  ``user:``, any user info of an ``http(s)`` URL, a ``?password=`` or ``?token=`` query
  value): the store's address goes in MLflow's own ``MLFLOW_TRACKING_URI`` (an http
  server's credentials in ``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD``),
  which the tool uses and shows only through :func:`redact_uri`.

The composed config is checked again once resolved (:func:`resolved_problems`), for keys
that come from a config file or an interpolation. The refusals never repeat the value, as it
may be the key.
"""

from __future__ import annotations

import re
from typing import Any

from locomo_exp.config.key_shapes import (
    ENV_REFERENCE_RE,
    KEY_VALUE_RE,
    env_reference_is_secret,
    key_shaped_name,
    resolved_secret_problems,
)

KEY_NAME_RE = re.compile(
    r"(?:^|[._])(?:api_?key|auth_?token|api_?token|access_?token|secret_?key|client_?secret)$",
    re.IGNORECASE,
)
"""The last dotted part of an override name that holds a credential."""

_PREFIX_RE = re.compile(r"^[+~]{0,2}")

USERINFO_RE = re.compile(r"://[^/?#\s]*@")
"""A URL's user info (``scheme://user:password@host``)."""

NOT_SAVED = "the value given was not saved"

URI_SECRET_PARAM_RE = re.compile(
    r"^(?:password|passwd|pwd|secret|token|[a-z]*[-_]?token|(?:x[-_])?api[-_]?key|key"
    r"|access[-_]?key|secret[-_]?key|client[-_]?secret|auth|sig|signature)$",
    re.IGNORECASE,
)
"""A URL query parameter whose value is a credential (``?password=``, ``?access_token=``,
``?api-key=``, ``?key=``)."""

_URI_USERINFO_RE = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<info>[^/?#\s]*)@")
_URI_QUERY_RE = re.compile(r"(?<=[?&;])(?P<name>[^=&;#]+)=(?P<value>[^&;#]*)")

MASK = "***"
"""What a credential in a shown URI is replaced by (as SQLAlchemy shows a URL)."""

TRACKING_URI_REFUSAL = (
    "tracking.uri must not hold a password or token (user:password@host, ?password=...); "
    "leave tracking.uri unset and export the store in MLFLOW_TRACKING_URI (an http(s) "
    "server's credentials in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD), which "
    f"is used and never written; {NOT_SAVED}"
)

BASE_URL_QUERY_REFUSAL = (
    "judge.base_url must not hold a token or key in its query (?token=..., ?api-key=...): it "
    "would be written to the run's config.yaml, .hydra/, card and MLflow; give the address "
    "without it and export the key in its environment variable (judge.api_key_env), which is "
    f"sent as a header and never written; {NOT_SAVED}"
)

_SWEEP_RE = re.compile(r"^\s*choice\((.*)\)\s*$", re.DOTALL)


def _values(value: str) -> list[str]:
    """The values of an override: one, or each of a sweep's ``a,b`` / ``choice(a,b)``."""
    sweep = _SWEEP_RE.match(value)
    inner = sweep.group(1) if sweep else value
    return [part.strip().strip("'\"").strip() for part in inner.split(",")]


def uri_secret_spans(uri: str) -> list[tuple[int, int]]:
    """Where ``uri`` holds a credential: ``(start, end)`` character spans, empty when none.

    A credential is the password of ``scheme://user:password@host`` (the user name alone is
    not one: ``postgresql://mlflow@host`` authenticates through ``.pgpass`` or the peer),
    the whole user info of an ``http(s)`` URL (what ``requests`` sends as basic
    authentication, a token included), and the value of a query parameter named like a
    credential (:data:`URI_SECRET_PARAM_RE`: ``?password=``, SQLAlchemy's way too).

    Args:
        uri: a tracking URI as given.

    Returns:
        The spans, in order.
    """
    spans: list[tuple[int, int]] = []
    info = _URI_USERINFO_RE.match(uri)
    if info:
        start, end = info.span("info")
        user, colon, _ = info.group("info").partition(":")
        if colon:
            spans.append((start + len(user) + 1, end))
        elif info.group("scheme").lower() in {"http", "https"} and end > start:
            spans.append((start, end))
    query = uri.find("?")
    if query >= 0:
        for found in _URI_QUERY_RE.finditer(uri, query):
            if URI_SECRET_PARAM_RE.match(found.group("name")) and found.group("value"):
                spans.append(found.span("value"))
    return spans


def redact_uri(uri: str) -> str:
    """``uri`` as it may be shown or written: each credential replaced by ``***``.

    Args:
        uri: a tracking URI (e.g. ``$MLFLOW_TRACKING_URI``).

    Returns:
        ``uri`` with :func:`uri_secret_spans` masked (``postgresql://u:***@host/db``);
        unchanged when it holds none.
    """
    for start, end in reversed(uri_secret_spans(uri)):
        uri = uri[:start] + MASK + uri[end:]
    return uri


def tracking_uri_problem(uri: str | None) -> str | None:
    """The refusal of a ``tracking.uri`` from a config file or composed config, or ``None``.

    Args:
        uri: ``tracking.uri`` (``None``: ``$MLFLOW_TRACKING_URI`` or the default store).

    Returns:
        One line (the value not repeated) when ``uri`` holds a credential.
    """
    return _value_problem("tracking.uri", [uri]) if uri else None


def _value_problem(key: str, values: list[str]) -> str | None:
    """The refusal of ``values`` for the override ``key`` (prefixes removed), or ``None``."""
    if key == "judge.api_key_env":
        if not any(v and key_shaped_name(v) for v in values):
            return None
        return (
            "judge.api_key_env must name an environment variable (letters, digits, _), not "
            f"hold a key; {NOT_SAVED}"
        )
    if key == "judge.base_url" and any(USERINFO_RE.search(v) for v in values):
        return (
            "judge.base_url must not hold a user name or password (user:password@host); put the "
            f"credential in the key's environment variable (judge.api_key_env); {NOT_SAVED}"
        )
    if key == "judge.base_url" and any(uri_secret_spans(v) for v in values):
        return BASE_URL_QUERY_REFUSAL
    if key == "tracking.uri" and any(uri_secret_spans(v) for v in values):
        return TRACKING_URI_REFUSAL
    return None


def key_override_problem(argv: list[str]) -> str | None:
    """The refusal of an API key given on the command line, or ``None`` when there is none.

    Args:
        argv: the command-line arguments after the program name.

    Returns:
        One line naming the first override that carries a key (its name only: the key
        itself is never repeated) and where a key goes instead; for ``judge.api_key_env``
        that is not a variable's name, or ``judge.base_url`` with user info or a
        credential in its query, one line
        saying what the value must be (the value is not repeated either).
    """
    overrides = [arg.split("=", 1) for arg in argv if not arg.startswith("-") and "=" in arg]
    key_names = tuple(
        v for name, value in overrides if _PREFIX_RE.sub("", name) == "judge.api_key_env"
        for v in _values(value)
    )
    for name, value in overrides:
        key = _PREFIX_RE.sub("", name)
        last = key.rsplit(".", 1)[-1]
        read = [v for v in ENV_REFERENCE_RE.findall(value) if env_reference_is_secret(v, key_names)]
        if KEY_NAME_RE.search(last):
            reason = "an API key is never accepted on the command line"
        elif KEY_VALUE_RE.search(value):
            reason = (
                "its value looks like an API key (sk-..., gsk_..., AIza..., ...), which is never "
                "accepted on the command line"
            )
        elif read:
            return (
                f"{name}=...: reads {read[0]} through ${{oc.env:...}}, a credential's variable: "
                "its value would be written to the run's config.yaml, card, report and MLflow; "
                f"name the variable in judge.api_key_env instead; {NOT_SAVED}"
            )
        else:
            problem = _value_problem(key, _values(value))
            if problem:
                return problem
            continue
        return (
            f"{name}=...: {reason} (it would be written to the run's saved config, card and "
            "report); export it in its environment variable (ANTHROPIC_API_KEY, "
            "OPENAI_API_KEY, or the one named by judge.api_key_env)"
        )
    return None


def judge_value_problems(api_key_env: str | None, base_url: str | None) -> list[str]:
    """The refusals of a composed config's ``judge.api_key_env`` and ``judge.base_url``.

    The command line is checked before Hydra runs (:func:`key_override_problem`); this
    catches the same values from a config file. The values are never repeated.

    Args:
        api_key_env: ``judge.api_key_env`` (``None``: no key is sent).
        base_url: ``judge.base_url`` (``None``: the provider's endpoint).

    Returns:
        One line per refused value, empty when both are fine.
    """
    given = {"judge.api_key_env": api_key_env, "judge.base_url": base_url}
    found = (_value_problem(key, [str(v)]) for key, v in given.items() if v is not None)
    return [problem for problem in found if problem]


def resolved_problems(config: Any) -> list[str]:
    """The refusals of a composed, resolved config that would save a key, values not repeated.

    Catches what the command-line check cannot see: a key in a config file, or one that an
    interpolation resolves to (a variable not named like a credential).

    Args:
        config: the typed config, every ``${...}`` resolved.

    Returns:
        One line per setting that holds a known key's form or a credential variable's value
        (:func:`locomo_exp.config.key_shapes.resolved_secret_problems`), each ending in
        "it would be written to ...".
    """
    return [
        f"{problem}; it would be written to the run's config.yaml, card, report and MLflow; "
        "a key is read only from its environment variable (judge.api_key_env)"
        for problem in resolved_secret_problems(config)
    ]
