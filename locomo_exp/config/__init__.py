"""The configuration: typed schema, override checks and the compare settings.

Importing this package loads OmegaConf and the project's registries of names, never
scipy, statsmodels, nltk, numpy or mlflow (``python -m locomo_exp --help`` stays fast).

* :mod:`.schema`: the dataclasses Hydra validates every value against (``base_config``);
* :mod:`.checks`: unknown keys and group choices, range checks, the typed conversion;
* :mod:`.compare`: the settings of ``mode=compare``.
"""

from __future__ import annotations

from locomo_exp.config.checks import (
    ConfigValueError,
    UnknownConfigKeyError,
    keep_typed_text,
    to_experiment_config,
    unknown_group_options,
    unknown_keys,
    unknown_override_keys,
    validate_values,
)
from locomo_exp.config.compare import CompareConfig
from locomo_exp.config.schema import (
    MAX_BOOTSTRAP_SAMPLES,
    MAX_JUDGE_RUNS,
    AuditControlFile,
    BaselineMetric,
    BaselineSet,
    BaselineSystem,
    BeamConfig,
    BeamProfile,
    DataConfig,
    ExperimentConfig,
    F1Config,
    F1Variant,
    FieldMap,
    JudgeAuditConfig,
    JudgeBatchConfig,
    JudgeConfig,
    JudgeMode,
    JudgeModelInfo,
    Mode,
    OnInvalid,
    OnMissingPrediction,
    ReportConfig,
    ScorerConfig,
    ScorerName,
    SweepSettings,
    TrackingConfig,
    register_configs,
)

__all__ = [
    "AuditControlFile",
    "BaselineMetric",
    "BaselineSet",
    "BaselineSystem",
    "BeamConfig",
    "BeamProfile",
    "CompareConfig",
    "ConfigValueError",
    "DataConfig",
    "ExperimentConfig",
    "F1Config",
    "F1Variant",
    "FieldMap",
    "JudgeAuditConfig",
    "JudgeBatchConfig",
    "JudgeConfig",
    "JudgeMode",
    "JudgeModelInfo",
    "MAX_BOOTSTRAP_SAMPLES",
    "MAX_JUDGE_RUNS",
    "Mode",
    "OnInvalid",
    "OnMissingPrediction",
    "ReportConfig",
    "ScorerConfig",
    "ScorerName",
    "SweepSettings",
    "TrackingConfig",
    "UnknownConfigKeyError",
    "keep_typed_text",
    "register_configs",
    "to_experiment_config",
    "unknown_group_options",
    "unknown_keys",
    "unknown_override_keys",
    "validate_values",
]
