"""Typed configuration schema for locomo_exp.

The dataclasses below are registered in Hydra's ConfigStore as ``base_config``;
``locomo_exp/conf/config.yaml`` lists it first in its defaults so every YAML value and every
command-line override is checked against these types when Hydra composes the config.
An unknown key (``data.pathh=x``) or a value of the wrong type (``f1.variant=bogus``)
therefore fails before any work is done.

Closed choices are ``Enum`` members (OmegaConf 2.3 validates enums, not ``Literal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Optional

from omegaconf import MISSING, OmegaConf

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.config.compare import CompareConfig


class Mode(str, Enum):
    """What ``python -m locomo_exp`` does: score one results file, or compare runs."""

    run = "run"
    compare = "compare"


class ScorerName(str, Enum):
    """Which scorers a run uses."""

    f1 = "f1"
    judge = "judge"
    both = "both"


F1_PRESET_DIR = Path(__file__).resolve().parent.parent / "conf" / "f1"
"""The ``f1`` config group (``conf/f1/<name>.yaml``: ``variant: <name>``, ``bleu1: ...``)."""


def f1_preset_variants(folder: Path = F1_PRESET_DIR) -> list[str]:
    """The ``variant`` each F1 preset selects, sorted and without repeats.

    The config layer cannot import the metric registry (:data:`locomo_exp.scoring.specs.F1_SPECS`,
    an engine above it), so ``f1.variant``'s choices are read from the group's own files, which a
    new variant adds anyway; ``tests/scoring/test_f1_specs.py`` checks that they name exactly the
    registry's variants.

    Args:
        folder: the ``f1`` group folder.

    Returns:
        The variant names, e.g. ``locomo`` and the others of the shipped presets.
    """
    variants = (OmegaConf.select(OmegaConf.load(p), "variant") for p in folder.glob("*.yaml"))
    return sorted({str(variant) for variant in variants if variant is not None})


F1Variant = Enum(  # type: ignore[misc]  # members come from the f1 presets
    "F1Variant",
    [(name, name) for name in f1_preset_variants()],
    type=str,
    module=__name__,
    qualname="F1Variant",
)
F1Variant.__doc__ = (
    "Which token-F1 definition is reported as ``f1`` (all variants are always computed). "
    "Members are the variants the ``conf/f1/*.yaml`` presets select, sorted "
    "(:func:`f1_preset_variants`), so a new variant needs no edit here."
)


class OnInvalid(str, Enum):
    """What to do with invalid records: stop before scoring, or score the rest."""

    error = "error"
    skip = "skip"


class OnMissingPrediction(str, Enum):
    """What to do with a prediction given as null, NaN or Infinity: score it 0, or stop."""

    zero = "zero"
    error = "error"


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
        """Whether the run computes F1 and BLEU-1 (``scorer=f1`` or ``both``)."""
        return self.name in (ScorerName.f1, ScorerName.both)

    @property
    def uses_judge(self) -> bool:
        """Whether the run calls the judge (``scorer=judge`` or ``both``)."""
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

    # one file, a glob (answers/*.json) or a list [a.json, b.json]: pooled as one result
    path: Any = MISSING
    # auto (detect) or a layout of locomo_exp.data.layouts.LAYOUTS; checked by data.layouts
    format: str = "auto"
    prediction_key: Optional[str] = None
    on_invalid: OnInvalid = OnInvalid.error
    on_missing_prediction: OnMissingPrediction = OnMissingPrediction.zero
    fields: FieldMap = field(default_factory=FieldMap)
    categories_from: Optional[str] = None
    # dotted key of the records inside a wrapper object, when detection finds several
    records_key: Optional[str] = None
    # LoCoMo's dataset (locomo10.json): check every question, take missing categories from it
    reference: Optional[str] = None
    # score a stratified sample of N questions (per-category shares kept), drawn with seed
    limit: Optional[int] = None
    seed: int = 0
    # one file per run of the same system (same questions): [run1.json, run2.json, ...]
    runs: Optional[list[str]] = None
    # an answer-key audit (errata.json): lexical metrics scored against both keys
    errata: Optional[str] = None
    # answers under per-setting keys (cutoff_results.top_200): read this setting only;
    # unset, a file with several settings scores each as a run
    setting: Optional[str] = None


@dataclass
class F1Config:
    """The ``f1`` group: the reported F1 variant, and whether to compute BLEU-1."""

    variant: F1Variant = F1Variant("locomo")
    bleu1: bool = True


@dataclass
class JudgeBatchConfig:
    """Options of ``judge.mode=batch`` (Message Batches API).

    ``wait=false`` submits and returns (the same command later collects). Polling starts
    every ``poll_interval_s`` seconds and backs off by ``poll_backoff`` up to
    ``max_poll_interval_s``. A batch holds at most ``max_requests`` requests and
    ``max_bytes`` bytes of JSON (API limits: 100,000 and 256 MB). Batch tokens cost
    ``price_factor`` times the list price (half price). ``canary`` sends the first
    call realtime before submitting, so a wrong model, key or temperature fails at once.
    ``abandon=true`` lets a ``judge.mode=realtime`` run on the same cache cancel the
    batches still processing and make their unfinished calls realtime (by default it waits
    for them: a call is never paid twice).
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
    abandon: bool = False


@dataclass
class JudgeModelInfo:
    """What a judge preset (``conf/judge/<preset>.yaml``) knows about its model.

    It applies to ``judge.model`` when ``id`` is that model (or its undated id, for a
    dated ``claude-sonnet-4-5-20250929``), or when ``id`` is null (a model described by
    hand). For another model (``judge.model=<any id>`` over a preset) nothing is known:
    structured output and a temperature are assumed supported and the cost is not
    estimated. Prices are US dollars per million tokens, standard (non-batch) list prices.
    ``context_tokens`` is the model's context window in tokens (the prompt limit when
    ``judge.max_prompt_tokens`` is null); null: not known.
    """

    id: Optional[str] = "claude-sonnet-4-6"
    input_usd_per_mtok: Optional[float] = 3.0
    output_usd_per_mtok: Optional[float] = 15.0
    structured_output: bool = True
    temperature: bool = True
    context_tokens: Optional[int] = 200_000


@dataclass
class AuditControlFile:
    """A user control file for the judge audit (``judge.audit.controls``).

    ``path`` is any results file the project reads; ``expected`` is ``right`` (every
    answer in it should be accepted) or ``wrong`` (every answer should be rejected).
    """

    path: str = MISSING
    expected: str = "wrong"


@dataclass
class JudgeAuditConfig:
    """The judge audit (``judge.audit``): control answers with a known verdict.

    On by default whenever the judge runs: ``n`` controls per kind (``n=0`` turns the
    audit off), judged like the real answers and never part of J. ``max_false_accept`` /
    ``max_false_reject`` are 0-1 rates checked per kind (null: no gate); a failed gate
    exits non-zero after the outputs are written. Each control is judged ``runs`` times
    (1), and the audit's calls are capped at ``max_share`` (0.25) of the answers' calls by
    judging fewer controls per kind (null: no cap).
    """

    n: int = 50
    seed: int = 0
    kinds: list[str] = field(
        default_factory=lambda: [
            "gold_as_answer",
            "other_gold",
            "adversarial_trap",
            "perturbed_date",
            "perturbed_number",
            "perturbed_name",
            "non_answer",
        ]
    )
    max_false_accept: Optional[float] = None
    max_false_reject: Optional[float] = None
    controls: list[AuditControlFile] = field(default_factory=list)
    # judge runs per control (an accept rate needs one verdict per control); null: judge.runs
    runs: Optional[int] = 1
    # audit calls at most this share (0-1) of the answers' calls (fewer controls per kind);
    # null: no cap
    max_share: Optional[float] = 0.25


@dataclass
class JudgeConfig:
    """The LLM-as-a-Judge settings (``scorer=judge`` or ``scorer=both``).

    ``temperature`` is 0-1 or null (send none). Times are in seconds; prices
    (``model_info``) are US dollars per million tokens. Values come from the ``judge``
    group's preset (``judge=sonnet-4-6`` by default); these defaults match it.
    """

    # a name in locomo_exp.llm.providers.PROVIDERS (anthropic, openai); checked before any call
    provider: str = "anthropic"
    model: str = "claude-sonnet-4-6"
    # the environment variable holding the key: auto = the provider's own (ANTHROPIC_API_KEY,
    # OPENAI_API_KEY); null = none (a local server). A key is never taken on the command line.
    api_key_env: Optional[str] = "auto"
    # a name in locomo_exp.judge.protocols.PROTOCOLS; checked by judge.protocols
    protocol: str = "rubric"
    # judge.protocol=template: the YAML file with your prompt and reply rule (docs/judge.md)
    template: Optional[str] = None
    # a plug-in benchmark whose authors read replies by their own steps: ours (the judge's
    # conclusion; a failed call is no verdict) or authors (their parser, to reproduce their
    # figures); the plug-in's page in docs/ says which
    parser: str = "ours"
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
    # Spend cap, USD: refuse before any call when the estimated cost of the answer calls
    # still to make exceeds it (null: no cap). docs/judge.md "Cost".
    max_cost_usd: Optional[float] = None
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
    # any call and not priced; null: the model's context window (judge.model_info.
    # context_tokens: 1M for gpt-4.1, 128k for gpt-4o, 200k for Claude; unknown for a
    # model no preset describes: nothing flagged, every prompt priced).
    max_prompt_tokens: Optional[int] = None
    # On Ctrl-C / SIGTERM: seconds to wait for calls in flight (their replies are cached).
    drain_s: float = 10.0
    dry_run: bool = False
    progress: bool = True
    progress_interval_s: float = 10.0
    mode: JudgeMode = JudgeMode.realtime
    batch: JudgeBatchConfig = field(default_factory=JudgeBatchConfig)
    # the preset's model: price and support flags (conf/judge/<preset>.yaml)
    model_info: JudgeModelInfo = field(default_factory=JudgeModelInfo)
    # judge trust: audit controls (on by default), human labels, a panel of judge presets
    audit: JudgeAuditConfig = field(default_factory=JudgeAuditConfig)
    labels: Optional[str] = None
    panel: list[str] = field(default_factory=list)


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
    # seconds an http(s) tracking server has to answer before any work (else one error line)
    connect_timeout_s: float = 5.0
    # every question as an MLflow trace with its F1 and verdicts (docs/mlflow.md: cost, default)
    questions: bool = False


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
    # a name in locomo_exp.judge.protocols.PROTOCOLS; checked by judge.protocols
    j_protocol: Optional[str] = None
    judge_model: Optional[str] = None
    overall_covers: str = "unstated"
    label_to_category: dict[str, int] = field(default_factory=dict)
    systems: list[BaselineSystem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # what is known of the disclosure card's fields (locomo_exp.report.card); unknown stays null
    card: dict[str, Any] = field(default_factory=dict)


MAX_JUDGE_RUNS = 100
"""Upper bound of ``judge.runs`` (each run is one API call per question)."""

MAX_BOOTSTRAP_SAMPLES = 100_000
"""Upper bound of ``report.bootstrap_samples`` (intervals are stable long before)."""


@dataclass
class ReportConfig:
    """Report settings: bootstrap resamples per interval (1-100,000) and their seed."""

    bootstrap_samples: int = 1000
    seed: int = 0


@dataclass
class SweepSettings:
    """``sweep.*``: how a multirun's summary compares its jobs."""

    # the job every other job is compared with: a swept value (0.5) or a job label
    # (judge.temperature=0.5); null: the first job
    baseline: Optional[str] = None


class BeamProfile(str, Enum):
    """``beam.profile``: the BEAM scoring profile a judged run's prompt follows (docs/beam.md)."""

    nugget = "nugget"
    official = "official"


@dataclass
class BeamConfig:
    """``beam.*``: judged BEAM runs (docs/beam.md).

    ``profile``: ``nugget`` (mem0's: the judge sees the question) or ``official`` (the
    authors': it does not; event ordering by Kendall tau-b over aligned lines). ``strict``
    fixes the official profile's quirks (0.5 kept, question shown); never on by default.
    """

    profile: BeamProfile = BeamProfile.nugget
    strict: bool = False


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
    # replace the outputs of a run already in the output dir (hydra.run.dir) instead of refusing
    overwrite: bool = False
    # run: score data.path; compare: compare the run directories in compare.runs
    mode: Mode = Mode.run
    compare: CompareConfig = field(default_factory=CompareConfig)
    sweep: SweepSettings = field(default_factory=SweepSettings)
    beam: BeamConfig = field(default_factory=BeamConfig)


def register_configs() -> None:
    """Register :class:`ExperimentConfig` as ``base_config`` in Hydra's ConfigStore.

    Also registers the ``${locomo_exp_dir:}`` resolver (the installed package directory,
    which holds ``conf/`` and ``example/``; ``${project_root:}`` is kept as an alias).
    Called by the CLI and by tests before composing; twice is harmless.
    """
    from pathlib import Path

    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="base_config", node=ExperimentConfig)
    # ${locomo_exp_dir:} lets conf/data/example.yaml name the example from any start
    # directory, in a checkout and in an installed wheel alike
    package_dir = str(Path(__file__).resolve().parent.parent)
    OmegaConf.register_new_resolver("locomo_exp_dir", lambda: package_dir, replace=True)
    OmegaConf.register_new_resolver("project_root", lambda: package_dir, replace=True)
