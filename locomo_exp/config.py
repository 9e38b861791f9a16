"""Typed configuration schema for locomo_exp.

The dataclasses below are registered in Hydra's ConfigStore as ``base_config``;
``conf/config.yaml`` lists it first in its defaults so every YAML value and every
command-line override is checked against these types when Hydra composes the config.
An unknown key (``data.pathh=x``) or a value of the wrong type (``f1.variant=bogus``)
therefore fails before any work is done.

Closed choices are ``Enum`` members (OmegaConf 2.3 validates enums, not ``Literal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

from omegaconf import MISSING, DictConfig, OmegaConf

from locomo_exp.records import DEFAULT_CATEGORY_NAMES


class ScorerName(str, Enum):
    """Which scorers a run uses."""

    f1 = "f1"
    judge = "judge"
    both = "both"


class F1Variant(str, Enum):
    """Which token-F1 definition is reported as ``f1`` (all variants are always computed)."""

    locomo = "locomo"
    squad = "squad"
    mem0 = "mem0"


class DataFormat(str, Enum):
    """Layout of a results file (see :mod:`locomo_exp.data`)."""

    auto = "auto"
    qa_results = "qa_results"
    locomo = "locomo"
    mem0 = "mem0"
    fields = "fields"


class OnInvalid(str, Enum):
    """What to do with invalid records: stop before scoring, or score the rest."""

    error = "error"
    skip = "skip"


class JudgeProtocol(str, Enum):
    """Judge prompt and output protocol (see :mod:`locomo_exp.judge.prompts`)."""

    rubric = "rubric"
    binary = "binary"


class BaselineMetric(str, Enum):
    """What a baseline set measured."""

    f1 = "f1"
    j = "j"
    latency = "latency"


class JudgeMode(str, Enum):
    """How judge calls are sent: one request at a time, or the Message Batches API."""

    realtime = "realtime"
    batch = "batch"


@dataclass
class ScorerConfig:
    """The ``scorer`` group: ``f1``, ``judge`` or ``both``."""

    name: ScorerName = ScorerName.f1

    @property
    def uses_f1(self) -> bool:
        return self.name in (ScorerName.f1, ScorerName.both)

    @property
    def uses_judge(self) -> bool:
        return self.name in (ScorerName.judge, ScorerName.both)


@dataclass
class FieldMap:
    """Field names for ``data.format=fields``: each value is a key of the input records.

    Dotted names (``meta.category``) reach into nested objects. Latency may be given in
    seconds (``*_latency_s``) or milliseconds (``*_latency_ms``), not both. ``judge_score``
    is a verdict already stored in the file by another judge (bool, 0/1, or 0-100).
    """

    question: str = "question"
    ground_truth: str = "ground_truth"
    prediction: str = "prediction"
    category: str = "category"
    question_id: Optional[str] = None
    conversation_id: Optional[str] = None
    evidence: Optional[str] = None
    adversarial_answer: Optional[str] = None
    search_latency_s: Optional[str] = None
    search_latency_ms: Optional[str] = None
    total_latency_s: Optional[str] = None
    total_latency_ms: Optional[str] = None
    context_tokens: Optional[str] = None
    judge_score: Optional[str] = None


@dataclass
class DataConfig:
    """The ``data`` group: which results file to score and how to read it."""

    path: Optional[str] = MISSING
    format: DataFormat = DataFormat.auto
    prediction_key: Optional[str] = None
    on_invalid: OnInvalid = OnInvalid.error
    fields: FieldMap = field(default_factory=FieldMap)
    categories_from: Optional[str] = None


@dataclass
class F1Config:
    """The ``f1`` group: the reported F1 variant, and whether to compute BLEU-1."""

    variant: F1Variant = F1Variant.locomo
    bleu1: bool = True


@dataclass
class JudgeBatchConfig:
    """Options of ``judge.mode=batch`` (Message Batches API).

    ``wait=false`` submits and returns (the same command later collects). Polling starts
    every ``poll_interval_s`` seconds and backs off by ``poll_backoff`` up to
    ``max_poll_interval_s``. A batch holds at most ``max_requests`` requests and
    ``max_bytes`` bytes of JSON (API limits: 100,000 and 256 MB). Batch tokens cost
    ``price_factor`` times ``judge.prices`` (half price). ``canary`` sends the first
    call realtime before submitting, so a wrong model, key or temperature fails at once.
    """

    wait: bool = True
    poll_interval_s: float = 30.0
    max_poll_interval_s: float = 300.0
    poll_backoff: float = 1.5
    max_requests: int = 100_000
    max_bytes: int = 250_000_000
    price_factor: float = 0.5
    canary: bool = True
    create_timeout_s: float = 600.0


@dataclass
class JudgeConfig:
    """The LLM-as-a-Judge settings (``scorer=judge`` or ``scorer=both``).

    ``temperature`` is 0-1 or null (send none). Times are in seconds; prices are US
    dollars per million tokens.
    """

    model: str = "claude-sonnet-4-6"
    protocol: JudgeProtocol = JudgeProtocol.rubric
    temperature: Optional[float] = 0.5
    max_tokens: int = 256
    runs: int = 10
    min_successful_runs: int = 5
    categories: list[int] = field(default_factory=lambda: [1, 2, 3, 4])
    structured_output: bool = True
    max_concurrency: int = 32
    requests_per_minute: Optional[int] = None
    timeout_s: float = 60.0
    max_retries: int = 4
    retry_initial_backoff_s: float = 1.0
    retry_max_backoff_s: float = 60.0
    base_url: Optional[str] = None
    max_error_rate: float = 0.0
    cache: bool = True
    cache_path: str = ".judge_cache/judge_cache.sqlite"
    # A call claimed by another process is waited for, not made again; its claim is
    # taken over at once if that process is dead (same host), or when it has sent no
    # heartbeat for this long (null: 2 x timeout_s x (max_retries + 1)).
    claim_timeout_s: Optional[float] = None
    # Stop the job (one line naming the URL) after this many connection failures in a
    # row; a connection failure on the job's first call stops it at once.
    max_consecutive_connection_errors: int = 10
    # Pace calls from the API's anthropic-ratelimit-requests-remaining/-reset headers.
    pace_from_rate_limit_headers: bool = True
    # Prompts estimated (characters / 3.5) above this many tokens are flagged before
    # any call (the judge models' context window is 200k tokens).
    max_prompt_tokens: int = 200_000
    # On Ctrl-C / SIGTERM: seconds to wait for calls in flight (their replies are cached).
    drain_s: float = 10.0
    dry_run: bool = False
    progress: bool = True
    progress_interval_s: float = 10.0
    mode: JudgeMode = JudgeMode.realtime
    batch: JudgeBatchConfig = field(default_factory=JudgeBatchConfig)
    # USD per million tokens, standard (non-batch) list prices; a dated id
    # (claude-sonnet-4-5-20250929) uses the entry of its undated id.
    prices: dict[str, Any] = field(
        default_factory=lambda: {
            "claude-sonnet-4-6": {"input": 3.0, "output": 15.0},
            "claude-sonnet-4-5": {"input": 3.0, "output": 15.0},
            "claude-sonnet-4": {"input": 3.0, "output": 15.0},
            "claude-haiku-4-5": {"input": 1.0, "output": 5.0},
            "claude-opus-4-6": {"input": 5.0, "output": 25.0},
            "claude-opus-4-5": {"input": 5.0, "output": 25.0},
            "claude-opus-4-1": {"input": 15.0, "output": 75.0},
            "claude-opus-4": {"input": 15.0, "output": 75.0},
            "claude-3-5-haiku": {"input": 0.8, "output": 4.0},
            "claude-3-haiku": {"input": 0.25, "output": 1.25},
        }
    )


@dataclass
class TrackingConfig:
    """The ``tracking`` group: MLflow on (``mlflow``) or off (``none``).

    ``uri`` falls back to ``MLFLOW_TRACKING_URI``, then to an absolute
    ``sqlite:///<start dir>/mlflow.db``.
    """

    enabled: bool = True
    uri: Optional[str] = None
    experiment: str = "locomo_exp"
    run_name: Optional[str] = None


@dataclass
class BaselineSystem:
    """One published system's numbers (percent for F1 and J; seconds/tokens for latency).

    ``categories`` is keyed by the *source's own* column label; the set's
    ``label_to_category`` maps those labels to LoCoMo category ids.
    """

    name: str = MISSING
    overall: Optional[float] = None
    std: Optional[float] = None
    categories: dict[str, float] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)


@dataclass
class BaselineSet:
    """A table of published numbers and how they were measured (``conf/baselines/``)."""

    title: str = MISSING
    source: str = MISSING
    metric: BaselineMetric = MISSING
    f1_variant: Optional[F1Variant] = None
    j_protocol: Optional[JudgeProtocol] = None
    judge_model: Optional[str] = None
    overall_covers: str = "unstated"
    label_to_category: dict[str, int] = field(default_factory=dict)
    systems: list[BaselineSystem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class ReportConfig:
    """Report settings."""

    bootstrap_samples: int = 1000
    seed: int = 0


@dataclass
class ExperimentConfig:
    """The whole run configuration; ``conf/config.yaml`` fills in the values."""

    scorer: ScorerConfig = field(default_factory=ScorerConfig)
    data: DataConfig = field(default_factory=DataConfig)
    f1: F1Config = field(default_factory=F1Config)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    baselines: dict[str, BaselineSet] = field(default_factory=dict)
    category_names: dict[int, str] = field(default_factory=lambda: dict(DEFAULT_CATEGORY_NAMES))


def register_configs() -> None:
    """Register :class:`ExperimentConfig` as ``base_config`` in Hydra's ConfigStore.

    Also registers the ``${project_root:}`` resolver (the checkout holding ``conf/`` and
    ``results/``). Called by the CLI and by tests before composing; twice is harmless.
    """
    from pathlib import Path

    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="base_config", node=ExperimentConfig)
    # ${project_root:} lets conf/data/example.yaml name the example from any start directory
    project_root = str(Path(__file__).resolve().parents[1])
    OmegaConf.register_new_resolver("project_root", lambda: project_root, replace=True)


class UnknownConfigKeyError(ValueError):
    """Config keys that the schema does not define, each with the closest known key."""

    def __init__(self, keys: list[tuple[str, Optional[str]]]):
        self.keys = keys
        parts = [
            f"{key}" + (f" (did you mean {suggestion}?)" if suggestion else "") for key, suggestion in keys
        ]
        super().__init__("unknown config key(s): " + "; ".join(parts))


def _unknown_keys(node: Any, schema: Any, prefix: str = "") -> list[tuple[str, Optional[str]]]:
    """Keys of ``node`` missing from the structured ``schema`` (recursing into dataclass nodes)."""
    import dataclasses
    import difflib

    found: list[tuple[str, Optional[str]]] = []
    if not isinstance(node, DictConfig) or not isinstance(schema, DictConfig):
        return found
    known = [str(k) for k in schema.keys()]
    for key in node.keys():
        name = f"{prefix}{key!s}"
        if str(key) not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            found.append((name, f"{prefix}{close[0]}" if close else None))
            continue
        child_schema = schema._get_node(key)
        if dataclasses.is_dataclass(OmegaConf.get_type(child_schema)):
            found += _unknown_keys(node._get_node(key), child_schema, f"{name}.")
    return found


def to_experiment_config(cfg: DictConfig | ExperimentConfig) -> ExperimentConfig:
    """Convert a composed Hydra config into a typed :class:`ExperimentConfig`.

    Args:
        cfg: the composed config (or an already typed one, returned as is).

    Returns:
        An :class:`ExperimentConfig` instance with enums and nested dataclasses.

    Raises:
        omegaconf.errors.ValidationError: if a value does not fit the schema.
        UnknownConfigKeyError: for keys the schema does not have (``+data.pathh=x``
            passes Hydra's composition but is refused here).
    """
    if isinstance(cfg, ExperimentConfig):
        return cfg
    schema = OmegaConf.structured(ExperimentConfig)
    unknown = _unknown_keys(cfg, schema)
    if unknown:
        raise UnknownConfigKeyError(unknown)
    merged = OmegaConf.merge(schema, cfg)
    obj = OmegaConf.to_object(merged)
    assert isinstance(obj, ExperimentConfig)
    return obj
