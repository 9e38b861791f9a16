"""Checks made before a judge job spends anything: config values, API key, model limits.

Model capabilities come from the judge preset (``judge.model_info``, see
:mod:`locomo_exp.llm.models`): e.g. ``judge=opus-4-7`` says the model rejects any
``temperature`` (docs/field_notes.md §4), so a temperature set with it fails here.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from locomo_exp.benchmark.locomo import CATEGORY_IDS
from locomo_exp.config import JudgeConfig, JudgeMode
from locomo_exp.judge.protocols import all_protocols, get_protocol, protocol_spec
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.models import accepts_temperature, prompt_limit
from locomo_exp.llm.providers import (
    custom_base_url,
    get_provider,
    is_reasoning_model,
    key_env,
    missing_key_message,
    missing_sdk_message,
    sdk_installed,
)
from locomo_exp.results import QARecord

if TYPE_CHECKING:
    from locomo_exp.judge.prompt_book import PromptBook

logger = logging.getLogger(__name__)

def _protocol_kinds(protocol: str) -> dict[int, str]:
    """Engine id -> kind of a protocol that judges its own kinds; ``{}`` for LoCoMo's."""
    try:
        spec = get_protocol(protocol)
    except ValueError:
        return {}
    return spec.kind_ids


def _kind_code_sets() -> list[set[int]]:
    """The engine ids of every resolvable protocol that judges its own kinds.

    A benchmark plug-in's protocol judges the ids of its own kinds (its ``kind_ids``): a
    template's ``by_kind`` texts may judge exactly one of these sets.
    """
    return [set(kinds) for spec in all_protocols().values() if (kinds := spec.kind_ids)]


def judged_records(records: list[QARecord], cfg: JudgeConfig) -> list[QARecord]:
    """The records whose category is in ``judge.categories``, in input order."""
    wanted = {int(c) for c in cfg.categories}
    return [r for r in records if r.category in wanted]


MAX_BATCH_REQUESTS = 100_000
"""The Message Batches API's limit on requests per batch (docs/field_notes.md §4)."""

MAX_BATCH_BYTES = 256 * 1024 * 1024
"""The Message Batches API's limit on a batch's size, bytes (256 MB)."""


def _batch_problems(cfg: JudgeConfig) -> list[str]:
    batch = cfg.batch
    problems: list[str] = []
    if not cfg.cache:
        problems.append(
            "judge.mode=batch needs judge.cache=true (batch ids and results are kept in the "
            "cache file, so a stopped run resumes instead of paying twice)"
        )
    if batch.poll_interval_s <= 0:
        problems.append(f"judge.batch.poll_interval_s={batch.poll_interval_s} must be positive")
    if batch.max_poll_interval_s < batch.poll_interval_s:
        problems.append(
            f"judge.batch.max_poll_interval_s={batch.max_poll_interval_s} must be at least "
            f"judge.batch.poll_interval_s={batch.poll_interval_s}"
        )
    if batch.poll_backoff < 1.0:
        problems.append(f"judge.batch.poll_backoff={batch.poll_backoff} must be at least 1")
    if not 1 <= batch.max_requests <= MAX_BATCH_REQUESTS:
        problems.append(
            f"judge.batch.max_requests={batch.max_requests} must be in [1, {MAX_BATCH_REQUESTS}]"
        )
    if not 4096 <= batch.max_bytes <= MAX_BATCH_BYTES:
        problems.append(
            f"judge.batch.max_bytes={batch.max_bytes} must be in [4096, {MAX_BATCH_BYTES}]"
        )
    if not 0.0 < batch.price_factor <= 1.0:
        problems.append(f"judge.batch.price_factor={batch.price_factor} must be in (0, 1]")
    if batch.create_timeout_s <= 0:
        problems.append(f"judge.batch.create_timeout_s={batch.create_timeout_s} must be positive")
    return problems


def provider_problems(cfg: JudgeConfig) -> list[str]:
    """What is wrong with ``judge.provider`` and its endpoint, SDK and key (one line each).

    A dry run needs neither the SDK nor the key. A reasoning model (o-series, gpt-5) with
    a temperature is a problem: it accepts none.
    """
    try:
        spec = get_provider(cfg.provider)
    except JudgeError as exc:
        return [str(exc)]
    problems: list[str] = []
    base_url, source = custom_base_url(cfg)
    if base_url:
        parts = urlsplit(str(base_url))
        if parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(
                f"{source}={base_url!r} is not an http(s) URL; e.g. {spec.default_base_url}"
            )
    if spec.name == "openai" and cfg.temperature is not None and is_reasoning_model(cfg.model):
        problems.append(
            f"judge.model={cfg.model} is a reasoning model and accepts no temperature; set "
            "judge.temperature=null"
        )
    if cfg.dry_run:
        return problems
    if not sdk_installed(spec):
        problems.append(missing_sdk_message(spec))
    env = key_env(cfg)
    if env is not None and not os.environ.get(env):
        problems.append(missing_key_message(cfg))
    return problems


def check_config(cfg: JudgeConfig) -> None:
    """Validate the judge config alone (no records).

    Raises:
        JudgeError: listing every problem found.
    """
    problems: list[str] = []
    if not str(cfg.model or "").strip():
        example = (
            "judge.model=claude-sonnet-4-6"
            if cfg.provider == "anthropic"
            else "judge=openai-compatible judge.model=llama3.1:8b (the id the server serves)"
        )
        problems.append(f"judge.model is empty; set judge.model to a model id, e.g. {example}")
    problems.extend(provider_problems(cfg))
    if cfg.temperature is not None and not (0.0 <= float(cfg.temperature) <= 1.0):
        problems.append(
            f"judge.temperature={cfg.temperature} is outside [0, 1]; use a value in [0, 1] or null"
        )
    if cfg.runs < 1:
        problems.append(f"judge.runs={cfg.runs} must be at least 1")
    kinds = _protocol_kinds(cfg.protocol)  # a plug-in's protocol judging its own kinds
    if kinds and sorted(int(c) for c in cfg.categories) != sorted(kinds):
        problems.append(
            f"judge.protocol={cfg.protocol} judges its benchmark's own kinds of question "
            f"({', '.join(kinds.values())}), not LoCoMo's categories; for a LoCoMo file use "
            "judge.protocol=rubric or binary"
        )
    allowed = set(kinds or CATEGORY_IDS)
    if cfg.protocol == TEMPLATE_PROTOCOL and sorted(int(c) for c in cfg.categories) in [
        sorted(codes) for codes in _kind_code_sets()
    ]:
        allowed = {int(c) for c in cfg.categories}  # a template judging a protocol's kinds
    unknown_categories = sorted({int(c) for c in cfg.categories} - allowed)
    if not kinds and (unknown_categories or not cfg.categories):
        problems.append(
            f"judge.categories={list(cfg.categories)} must be a non-empty list of LoCoMo "
            "categories 1-5"
        )
    if cfg.max_tokens < 1:
        problems.append(f"judge.max_tokens={cfg.max_tokens} must be at least 1")
    if cfg.max_concurrency < 1:
        problems.append(f"judge.max_concurrency={cfg.max_concurrency} must be at least 1")
    if cfg.requests_per_minute is not None and cfg.requests_per_minute <= 0:
        problems.append(
            f"judge.requests_per_minute={cfg.requests_per_minute} must be positive or null"
        )
    if cfg.max_retries < 0:
        problems.append(f"judge.max_retries={cfg.max_retries} must be 0 or more")
    if cfg.timeout_s <= 0:
        problems.append(f"judge.timeout_s={cfg.timeout_s} must be positive")
    if cfg.claim_timeout_s is not None and cfg.claim_timeout_s <= 0:
        problems.append(f"judge.claim_timeout_s={cfg.claim_timeout_s} must be positive or null")
    if cfg.max_consecutive_connection_errors < 1:
        problems.append(
            f"judge.max_consecutive_connection_errors={cfg.max_consecutive_connection_errors} "
            "must be at least 1"
        )
    if cfg.drain_s < 0:
        problems.append(f"judge.drain_s={cfg.drain_s} must be 0 or more")
    if cfg.max_prompt_tokens is not None and cfg.max_prompt_tokens < 1:
        problems.append(f"judge.max_prompt_tokens={cfg.max_prompt_tokens} must be at least 1")
    if not 0.0 <= cfg.max_error_rate <= 1.0:
        problems.append(f"judge.max_error_rate={cfg.max_error_rate} must be in [0, 1]")
    if cfg.temperature is not None and not accepts_temperature(cfg):
        problems.append(
            f"judge.model={cfg.model} does not accept a temperature "
            "(judge.model_info.temperature=false); set judge.temperature=null"
        )
    if JudgeMode(cfg.mode) is JudgeMode.batch:
        problems.extend(_batch_problems(cfg))
    try:
        protocol_spec(cfg)
    except ValueError as exc:  # incl. a template file's one-line TemplateError
        problems.append(str(exc))
    if problems:
        raise JudgeError("invalid judge configuration: " + "; ".join(problems))


CHARS_PER_TOKEN = 3.5
"""Characters per input token assumed by estimates (English prose, conservative)."""

REQUEST_OVERHEAD_TOKENS = 20
"""Input tokens added per request for message framing, in estimates."""


def estimate_prompt_tokens(system: str, prompt: str) -> int:
    """Estimated input tokens of one judge request.

    Formula: ``ceil((len(system) + len(prompt)) / 3.5) + 20`` (characters per token of
    English prose, rounded up; plus the message framing).

    Args:
        system: the system prompt.
        prompt: the user message.

    Returns:
        Estimated input tokens.
    """
    return int(math.ceil((len(system) + len(prompt)) / CHARS_PER_TOKEN)) + REQUEST_OVERHEAD_TOKENS


REFUSE_CHARS_PER_TOKEN = 5.0
"""Characters per input token at which a prompt is refused as too long for the model.

More characters per token than English prose gets from the judges' tokenizers (OpenAI's
rule of thumb is ~4 characters per English token; Claude's tokenizer cuts text into more
tokens, ~3.5): a prompt over the limit even at 5 characters per token is over it with any
of them, so refusing it never refuses a prompt the API would accept. Between this and the
estimate's :data:`CHARS_PER_TOKEN` (the grey zone) a prompt is only warned about.
"""


def least_prompt_tokens(system: str, prompt: str) -> int:
    """The fewest input tokens one judge request can plausibly have (a lower bound).

    Formula: ``floor((len(system) + len(prompt)) / 5)`` (:data:`REFUSE_CHARS_PER_TOKEN`,
    no framing overhead).

    Args:
        system: the system prompt.
        prompt: the user message.

    Returns:
        Input tokens, rounded down.
    """
    return int((len(system) + len(prompt)) // REFUSE_CHARS_PER_TOKEN)


PromptSize = tuple[QARecord, int, int, int, str]
"""``(record, characters, estimated tokens, least tokens, prompt)`` of one judged record."""


def _prompt_sizes(records: list[QARecord], cfg: JudgeConfig, book: PromptBook | None = None
                  ) -> list[PromptSize]:
    """:data:`PromptSize` of each judged record's prompt (records whose kind has none skipped).

    ``book``: the job's prompts already built (:class:`~.prompt_book.PromptBook`), else
    each is built here.
    """
    try:
        spec = protocol_spec(cfg)
    except ValueError:
        return []
    sizes: list[PromptSize] = []
    for record in judged_records(records, cfg):
        try:
            prompt = (spec.build_record_prompt(record) if book is None
                      else book.prompt(spec, record))
        except ValueError:  # a kind the template has no text for: preflight_judge names it
            continue
        sizes.append((
            record,
            len(spec.system_prompt) + len(prompt),
            estimate_prompt_tokens(spec.system_prompt, prompt),
            least_prompt_tokens(spec.system_prompt, prompt),
            prompt,
        ))
    return sizes


def overlong_prompts(
    records: list[QARecord], cfg: JudgeConfig, *,
    sizes: list[PromptSize] | None = None,
) -> list[tuple[str, int]]:
    """Judged records whose prompt is estimated above the prompt limit.

    The limit is :func:`~locomo_exp.llm.models.prompt_limit` (``judge.max_prompt_tokens``,
    else the model's context window). Such a call may come back as a 400 ``prompt is too
    long``: that question alone gets an API error (J n/a) and the job goes on; flagging it
    first saves the surprise. Those clearly over the limit are refused instead
    (:func:`refuse_too_long_prompts`).

    Args:
        records: the records of the run (only those in ``judge.categories`` count).
        cfg: the judge config.
        sizes: the records' prompt sizes already computed for ``cfg`` (``_prompt_sizes``,
            as :func:`preflight_judge` hands them over so each prompt is built once);
            ``None``: built here.

    Returns:
        ``(question_id, estimated_tokens)`` in input order (see :func:`estimate_prompt_tokens`).
    """
    limit = prompt_limit(cfg)
    if limit is None:
        return []
    if sizes is None:
        sizes = _prompt_sizes(records, cfg)
    return [(r.question_id, tokens) for r, _, tokens, _, _ in sizes if tokens > limit]


def limit_words(cfg: JudgeConfig) -> str:
    """What the prompt limit is: ``judge.max_prompt_tokens`` or the model's context window."""
    if cfg.max_prompt_tokens is not None:
        return "judge.max_prompt_tokens"
    return "the model's context window judge.model_info.context_tokens"


def refuse_too_long_prompts(
    records: list[QARecord], cfg: JudgeConfig, *, source: str | None = None,
    who: str = "judge", sizes: list[PromptSize] | None = None,
) -> None:
    """Refuse, before any call, prompts over the limit even at 5 characters per token.

    The limit is :func:`~locomo_exp.llm.models.prompt_limit`; a prompt whose lower bound
    (:func:`least_prompt_tokens`) is above it cannot fit the model, so the job is refused
    with the records named instead of paying for the rest and leaving them without J.

    Args:
        records: the records of the run (only those in ``judge.categories`` count).
        cfg: the judge config (a panel member's for its model).
        source: the answers file, named in the line; ``None`` names the records only.
        who: who would send the prompts (``judge``, ``judge.panel member gpt-4o``).
        sizes: the records' prompt sizes already computed for ``cfg`` (as in
            :func:`overlong_prompts`); ``None``: built here.

    Raises:
        JudgeError: one line naming the file, each record's question id and position
            (reading order, from 1) and the prompt's size; no call was made.
    """
    limit = prompt_limit(cfg)
    if limit is None:
        return
    if sizes is None:
        sizes = _prompt_sizes(records, cfg)
    over = [(r, chars, est, least) for r, chars, est, least, _ in sizes if least > limit]
    if not over:
        return
    shown = "; ".join(
        f"question_id {r.question_id} (record #{r.position + 1}): {chars} characters, "
        f"~{est} tokens at {CHARS_PER_TOKEN:g} characters per token, at least {least}"
        for r, chars, est, least in over[:5]
    )
    more = f"; and {len(over) - 5} more" if len(over) > 5 else ""
    where = f"{source}: " if source else ""
    raise JudgeError(
        f"{where}{len(over)} {who} prompt(s) too long for model {cfg.model}: {shown}{more}; "
        f"over {limit_words(cfg)}={limit} even at {REFUSE_CHARS_PER_TOKEN:g} characters per "
        "token, so the API would refuse them; no call was made. Shorten those answers, "
        "remove those records or leave their categories out of judge.categories"
    )


def describe_overlong(
    found: list[tuple[str, int]], limit: int, what: str = "judge.max_prompt_tokens"
) -> str:
    """One line naming over-long prompts (at most 10 ids shown); ``what`` names the limit."""
    shown = ", ".join(f"{qid} (~{tokens} tokens)" for qid, tokens in found[:10])
    more = f" and {len(found) - 10} more" if len(found) > 10 else ""
    return (
        f"judge: {len(found)} prompt(s) estimated above {what}={limit}: "
        f"{shown}{more}; the API may reject them (400 prompt is too long): those questions "
        "would get no J and the rest is judged"
    )


def preflight_judge(
    cfg: JudgeConfig, records: list[QARecord], *, start_dir: Path | None = None,
    source: str | None = None, prompts: PromptBook | None = None,
) -> dict[str, str]:
    """Validate a judge job before any call or spending.

    Checks: a non-empty model; temperature in [0, 1] or null; runs, max_tokens,
    max_concurrency >= 1; a known ``judge.provider`` whose SDK is installed and whose key's
    variable is set (unless ``judge.dry_run``; :func:`provider_problems`); no
    temperature for a model whose preset says it rejects one (``judge=opus-4-7``); for
    ``judge.mode=batch``, the
    cache on and the batch options in range; unique question ids among judged records;
    with ``start_dir``, a usable ``judge.cache_path`` (not a directory, not a non-SQLite
    file; an existing file opened, ``quick_check``-ed and written to, so a corrupt cache
    is refused before the run directory is written); no prompt over the prompt limit
    (``judge.max_prompt_tokens``, else the model's context window) even at 5 characters
    per token (:func:`refuse_too_long_prompts`). Prompts estimated above the limit at the
    estimate's 3.5 characters per token but not clearly over it are logged as a warning
    naming the questions (not an error: the API may accept them).

    Args:
        cfg: the judge config.
        records: the records of the run (only those in ``judge.categories`` are judged).
        start_dir: directory a relative ``judge.cache_path`` is resolved against; ``None``
            skips the cache-path check.
        source: the answers file the records come from, named when a prompt is refused.
        prompts: the job's prompts built so far (:class:`~.prompt_book.PromptBook`): a
            prompt found there is not built again, one built here is kept there for the
            job's later steps (the pipeline's preflight, then the judge step's
            :func:`~locomo_exp.judge.run_judge`); ``None``: built here, kept nowhere.

    Returns:
        The user message of each judged record's prompt, by question id, as built for the
        size checks (empty when the model has no prompt limit), for
        :func:`~locomo_exp.judge.calls.build_call_specs` so each prompt is built once.

    Raises:
        JudgeError: with every problem found, each saying what to change.
    """
    check_config(cfg)
    if cfg.cache and start_dir is not None:
        from locomo_exp.llm.cache import cache_path_problem, resolve_cache_path
        from locomo_exp.llm.cache.health import existing_cache_problem

        path = resolve_cache_path(cfg.cache_path, start_dir)
        problem = cache_path_problem(path) or existing_cache_problem(path)
        if problem is not None:
            raise JudgeError(problem)
    judged = judged_records(records, cfg)
    seen: set[str] = set()
    duplicates: set[str] = set()
    for record in judged:
        (duplicates if record.question_id in seen else seen).add(record.question_id)
    if duplicates:
        shown = ", ".join(sorted(duplicates)[:5])
        raise JudgeError(f"duplicate question ids among judged records: {shown}")
    kind_problems = protocol_spec(cfg).record_problems(judged)
    if kind_problems:
        raise JudgeError("; ".join(kind_problems))
    if records and not judged:
        logger.warning(
            "judge: no record is in judge.categories=%s; nothing will be judged",
            list(cfg.categories),
        )
    # each prompt built once for both checks (same refusal first, then the same warning)
    sizes = _prompt_sizes(judged, cfg, prompts) if prompt_limit(cfg) is not None else []
    refuse_too_long_prompts(judged, cfg, source=source, sizes=sizes)
    overlong = overlong_prompts(judged, cfg, sizes=sizes)
    if overlong:
        logger.warning(
            "%s", describe_overlong(overlong, prompt_limit(cfg) or 0, limit_words(cfg))
        )
    return {r.question_id: prompt for r, _, _, _, prompt in sizes}


def check_panel_members(panel: list[tuple[str, JudgeConfig]]) -> None:
    """Refuse, before any call, a panel the judging would refuse after paying for it.

    Args:
        panel: ``(preset, judge config)`` per member.

    Raises:
        JudgeError: a model named twice (a panel of one model measures nothing), or a
            member whose settings :func:`check_config` refuses.
    """
    models = [member.model for _, member in panel]
    repeated = sorted({m for m in models if models.count(m) > 1})
    if repeated:
        raise JudgeError(
            f"judge.panel names the model {', '.join(repeated)} more than once "
            f"({', '.join(p for p, _ in panel)}): a panel needs distinct judge models"
        )
    for preset, member in panel:
        try:
            check_config(member)
        except JudgeError as error:
            raise JudgeError(f"judge.panel: preset {preset!r}: {error}") from None
