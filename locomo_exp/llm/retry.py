"""Retry and stop policy of judge calls: backoff, fatal-error messages, claim polling."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from locomo_exp.config import JudgeConfig
from locomo_exp.llm.errors import JudgeCallError, JudgeFatalAPIError, JudgeJobStopped
from locomo_exp.llm.providers import get_provider, key_env

API_KEY_ENV = "ANTHROPIC_API_KEY"
"""Where the default provider's key is read from (``judge.api_key_env`` may name another)."""


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; the server's ``retry-after`` wins when given.

    Attributes:
        max_retries: retries after the first attempt.
        initial_backoff_s: delay before the first retry, seconds.
        max_backoff_s: cap of the exponential delay, seconds.
        max_retry_after_s: cap on a server-given ``retry-after``, seconds.
    """

    max_retries: int = 4
    initial_backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    max_retry_after_s: float = 600.0

    @classmethod
    def from_config(cls, cfg: JudgeConfig) -> RetryPolicy:
        """The policy the judge config asks for.

        ``judge.max_retries``, ``judge.retry_initial_backoff_s`` and
        ``judge.retry_max_backoff_s`` (``max_retry_after_s`` keeps its default).
        """
        return cls(
            max_retries=cfg.max_retries,
            initial_backoff_s=cfg.retry_initial_backoff_s,
            max_backoff_s=cfg.retry_max_backoff_s,
        )

    def delay(
        self,
        retry_number: int,
        retry_after_s: float | None,
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Seconds to wait before retry ``retry_number`` (0-based).

        Args:
            retry_number: 0 for the first retry.
            retry_after_s: the server's ``retry-after``, if any.
            rand: uniform [0, 1) source (for tests).

        Returns:
            ``retry-after`` (capped at ``max_retry_after_s``) when given, else
            ``min(max_backoff_s, initial_backoff_s * 2**retry_number)`` times a jitter
            factor in [0.75, 1].
        """
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_retry_after_s)
        base = min(self.max_backoff_s, self.initial_backoff_s * (2.0 ** min(retry_number, 30)))
        return base * (1.0 - 0.25 * rand())


def fatal_message(
    error: JudgeCallError, model: str, key_variable: str | None = API_KEY_ENV
) -> str:
    """The message of a job stopped by a non-retryable API error (never contains the key).

    Args:
        error: the classified error.
        model: the judge model id.
        key_variable: the variable the key came from (``None``: no key was sent).

    Returns:
        The API's message plus what to change.
    """
    status = error.status_code if error.status_code is not None else "?"
    api = error.message
    if error.kind == "temperature_rejected":
        return (
            f"the judge model {model} does not accept a temperature ({status}: {api}). "
            "Set judge.temperature=null to send none."
        )
    if error.kind == "not_found":
        return (
            f"the API returned {status} for judge model {model!r}: {api}. The model id may be "
            "wrong or retired; set judge.model to a current model id."
        )
    if error.kind == "authentication":
        where = key_variable or "judge.api_key_env (no key was sent)"
        return f"the API rejected the credentials ({status}: {api}). Check {where}."
    if error.kind == "permission":
        return f"the API denied access ({status}: {api}). Check the key's access to {model}."
    hint = ""
    lowered = api.lower()
    if any(word in lowered for word in ("output_config", "json_schema", "structured")):
        hint = " Set judge.structured_output=false if the model does not support it."
    return f"the API rejected the judge request ({status} {error.kind}: {api}).{hint}"


CLAIM_POLL_INITIAL_S = 0.05
"""First delay before looking again at a call another owner has in flight, seconds."""
CLAIM_POLL_MAX_S = 1.0
"""Cap of that delay (it doubles at each look), seconds."""


def claim_poll_delay(looks: int) -> float:
    """Seconds to wait before looking again at a call another owner has in flight.

    Args:
        looks: how many times the call was already found in flight (0 for the first).

    Returns:
        ``min(CLAIM_POLL_MAX_S, CLAIM_POLL_INITIAL_S * 2**looks)``.
    """
    return min(CLAIM_POLL_MAX_S, CLAIM_POLL_INITIAL_S * 2.0**looks)


def claim_timeout_s(cfg: JudgeConfig) -> float:
    """Seconds without heartbeat after which another owner's claim is taken over.

    ``judge.claim_timeout_s``, or by default ``2 x timeout_s x (max_retries + 1)``. A dead
    owner on this host is detected at once (its pid), whatever this timeout.
    """
    if cfg.claim_timeout_s is not None:
        return float(cfg.claim_timeout_s)
    return 2.0 * float(cfg.timeout_s) * (int(cfg.max_retries) + 1)


def fatal_api_error(error: JudgeCallError, cfg: JudgeConfig) -> JudgeFatalAPIError:
    """The exception that stops a job at a non-retryable API error (see :func:`fatal_message`).

    Args:
        error: the classified error.
        cfg: the judge config (its model and the variable its key came from).
    """
    return JudgeFatalAPIError(
        fatal_message(error, cfg.model, key_env(cfg)),
        status_code=error.status_code,
        kind=error.kind,
        api_message=error.message,
    )


def error_rate_stop(
    cfg: JudgeConfig, api_errors: int, total_calls: int, last: JudgeCallError
) -> JudgeJobStopped | None:
    """The early stop once API errors exceed ``judge.max_error_rate`` of the job's calls.

    Args:
        cfg: the judge config.
        api_errors: calls that ended in an API error so far.
        total_calls: all calls of the job.
        last: the latest API error (named in the message).

    Returns:
        The exception to raise after the calls in flight, or ``None`` while within the rate.
    """
    allowed = float(cfg.max_error_rate) * total_calls
    if api_errors <= allowed:
        return None
    return JudgeJobStopped(
        f"judge API errors exceed judge.max_error_rate={cfg.max_error_rate:g}: "
        f"{api_errors} of {total_calls} calls failed (at most {allowed:g} "
        f"allowed; last: {last.describe()}); stopped early, completed calls are "
        "cached: re-run the same command to resume"
    )


def connection_stop(cfg: JudgeConfig, base_url: str, reason: str) -> JudgeJobStopped:
    """The early stop when the endpoint cannot be reached.

    Args:
        cfg: the judge config (its provider names the base-URL variable).
        base_url: the endpoint the client talks to (never contains the key).
        reason: what failed (the connection error, or how many failed in a row).
    """
    return JudgeJobStopped(
        f"cannot connect to the judge API at {base_url} ({reason}); check "
        f"judge.base_url (or {get_provider(cfg.provider).base_url_env}) and the network"
    )
