"""Shared test set-up: project paths, an isolated directory per test, and the helpers every file uses.

- Every test runs in its own temporary directory (``tmp_path`` is the working directory), with
  the caller's ``ANTHROPIC_*``, ``OPENAI_*``, ``HYDRA_*`` and ``MLFLOW_*`` variables removed and
  ``MLFLOW_TRACKING_URI`` pointing at ``tmp_path/mlflow.db``. The judge cache
  (``judge.cache_path``, relative to the start directory, which defaults to the working
  directory) and the MLflow store (``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else
  ``<start dir>/mlflow.db``) therefore land in ``tmp_path``: a ``.judge_cache/`` or an
  ``mlflow.db`` left in the checkout by a user's own runs is never read
  (``tests/project/test_isolation.py``). Tests pass ``tmp_path``, never the project root, as the start
  directory or a subprocess's ``cwd``.
- :func:`run_cli` runs ``python -m locomo_exp`` in a subprocess with a clean environment,
  :func:`run_python` a script (one that patches the tool, then runs it) the same way;
  :func:`run_job` runs one job in process with tracking off, and the :func:`run_judged`
  fixture one job judged by the fake Anthropic API; :func:`mlflow_runs` lists an
  experiment's runs in a test's store.
- The fake Anthropic Messages API and OpenAI API (``fake_anthropic``, ``fake_openai`` fixtures) are loaded as plugins from
  ``tests/fake_anthropic.py`` and ``tests/fake_openai.py``.

Import the constants and helpers with ``from conftest import ...`` (the ``tests/`` folder is on
``sys.path`` under pytest's default import mode, as for ``fake_anthropic``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from locomo_exp.benchmarks.names import registry_name_problems
from locomo_exp.config import (
    DataConfig,
    ExperimentConfig,
    JudgeConfig,
    ScorerConfig,
    ScorerName,
    TrackingConfig,
    register_configs,
    to_experiment_config,
)
from locomo_exp.experiment import run_experiment

pytest_plugins = ["fake_anthropic", "fake_openai"]


# tests/<package>/ mirrors locomo_exp/; a test module another package's tests import
# (``from test_compare import write_run``) is found through its folder here
for _shared in ("compare", "scoring", "trust", "benchmarks/longmemeval"):
    sys.path.insert(1, str(Path(__file__).resolve().parent / _shared))

PROJECT_ROOT = Path(__file__).resolve().parents[1]
"""The checkout: read its files (configs, example, docs), never start a job in it."""
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
CONF_DIR = PROJECT_ROOT / "locomo_exp" / "conf"
EXAMPLE = PROJECT_ROOT / "locomo_exp" / "example" / "qa_results.json"

AMBIENT_PREFIXES = ("ANTHROPIC_", "OPENAI_", "MLFLOW_", "HYDRA_")
"""Environment variables of the caller that could reach an API or a tracking store, or change
Hydra's error output."""

Composer = Callable[..., ExperimentConfig]
"""``compose(*overrides) -> ExperimentConfig`` (the :func:`typed_config` fixture)."""


@pytest.fixture(autouse=True)
def isolated_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test in ``tmp_path`` with no ambient API or MLflow settings; MLflow's store in it."""
    for name in list(os.environ):
        if name.startswith(AMBIENT_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(autouse=True)
def plugin_protocols() -> Iterator[None]:
    """The benchmark plug-ins' judge protocols resolvable by name, as the command line makes them.

    ``python -m locomo_exp`` runs every job inside
    :func:`locomo_exp.benchmarks.registry.protocols_in_use`; jobs and judge calls made in
    process by the tests get the same (``judge.protocol=longmemeval``).
    """
    from locomo_exp.benchmarks.registry import protocols_in_use

    with protocols_in_use():
        yield


def clean_env(server: Any = None, **extra: str) -> dict[str, str]:
    """The caller's environment for a subprocess, without API keys, endpoints or MLflow settings.

    Args:
        server: a ``FakeAnthropicServer``; when given, its URL and the fake key are set.
        **extra: variables to set.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith(AMBIENT_PREFIXES)}
    if server is not None:
        from fake_anthropic import FAKE_API_KEY

        env.update(ANTHROPIC_API_KEY=FAKE_API_KEY, ANTHROPIC_BASE_URL=server.url)
    env.update(extra)
    return env


def run_cli(
    *args: str,
    cwd: Path,
    server: Any = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """``python -m locomo_exp *args`` in ``cwd`` (a temporary directory), output captured.

    Args:
        *args: Hydra arguments and overrides (``-m`` for a sweep).
        cwd: the start directory; relative outputs, the judge cache and the default MLflow
            store land there.
        server: a ``FakeAnthropicServer`` the judge is pointed at (with the fake key).
        env: the whole environment (default: :func:`clean_env` of ``server``).
        timeout: seconds before the subprocess is killed (a guard, not a measurement).
    """
    return subprocess.run(
        [sys.executable, "-m", "locomo_exp", *args],
        cwd=cwd,
        env=dict(env) if env is not None else clean_env(server),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_cli_ok(*args: str, cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` that must succeed: exit status 0, else the test fails showing its stderr."""
    done = run_cli(*args, cwd=cwd, **kwargs)
    assert done.returncode == 0, done.stderr
    return done


def run_python(code: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in ``cwd`` with :func:`clean_env`, output captured, exit status kept.

    For a script that patches the tool, then runs it (``runpy.run_module("locomo_exp")``).
    ``timeout`` is in seconds (a guard, not a measurement).
    """
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def write_stored_verdicts(path: Path, verdicts: list[int]) -> Path:
    """A LoCoMo answers file with stored verdicts: question k in conversation k mod 6,
    category k mod 4 + 1, F1 and BLEU 0.5, ``llm_score`` the k-th verdict (1 = correct)."""
    import json

    data: dict[str, list[dict[str, object]]] = {}
    for k, verdict in enumerate(verdicts):
        data.setdefault(str(k % 6), []).append({
            "question": f"question {k}?", "answer": f"gold {k}", "response": f"answer {k}",
            "category": str(k % 4 + 1), "bleu_score": 0.5, "f1_score": 0.5,
            "llm_score": verdict,
        })
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def mlflow_runs(store: Path | str, experiment: str) -> list[Any]:
    """The MLflow runs of ``experiment``, newest first.

    Args:
        store: a tracking URI, or a directory whose ``mlflow.db`` is the store (a job's
            default store when that directory is its start directory).
        experiment: the experiment's name (it must exist).
    """
    import mlflow

    uri = store if isinstance(store, str) else f"sqlite:///{Path(store) / 'mlflow.db'}"
    client = mlflow.MlflowClient(tracking_uri=uri)
    return list(client.search_runs([client.get_experiment_by_name(experiment).experiment_id]))


def run_job(
    tmp_path: Path,
    data: DataConfig | None = None,
    *,
    scorer: ScorerName = ScorerName.f1,
    judge: JudgeConfig | None = None,
    **data_fields: Any,
) -> Any:
    """One job in process, tracking off: outputs in ``tmp_path/out``, start directory ``tmp_path``.

    Args:
        tmp_path: the test's directory.
        data: the data settings, or ``None`` to build them from ``data_fields``.
        scorer: which scorer runs.
        judge: judge settings (default: the schema's).
        **data_fields: ``DataConfig`` fields when ``data`` is not given (a ``Path`` is passed as
            text).

    Returns:
        The :func:`locomo_exp.experiment.run_experiment` result.
    """
    if data is None:
        data = DataConfig(
            **{key: str(value) if isinstance(value, Path) else value for key, value in data_fields.items()}
        )
    extra: dict[str, Any] = {} if judge is None else {"judge": judge}
    cfg = ExperimentConfig(
        scorer=ScorerConfig(name=scorer), data=data, tracking=TrackingConfig(enabled=False), **extra
    )
    return run_experiment(cfg, tmp_path / "out", tmp_path)


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` (real public LoCoMo files); skips the test when it is absent."""
    if not (SHARED_DATA / "predictions").is_dir():
        pytest.skip(f"real LoCoMo data not found at {SHARED_DATA} (read-only shared/ folder)")
    return SHARED_DATA


@pytest.fixture
def fixtures_dir() -> Path:
    """The project's own small input files."""
    return FIXTURES


@pytest.fixture
def run_judged(
    fake_anthropic: Any, typed_config: Composer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Any]:
    """``run_judged(*overrides, out="out", start_dir=tmp_path)``: one job judged in process.

    The judge is the ``fake_anthropic`` server (the test sets its ``responder``), with the
    fake key, the cache in ``tmp_path/cache.sqlite``, no progress bar and tracking off;
    ``overrides`` come last. Returns the ``run_experiment`` result (outputs in
    ``tmp_path/out``).
    """
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake")

    def _run(*overrides: str, out: str = "out", start_dir: Path | None = None) -> Any:
        cfg = typed_config(
            "tracking.enabled=false", f"judge.base_url={fake_anthropic.url}",
            f"judge.cache_path={tmp_path}/cache.sqlite", "judge.progress=false", *overrides,
        )
        return run_experiment(cfg, tmp_path / out, start_dir or tmp_path)

    return _run


@pytest.fixture
def typed_config() -> Iterator[Composer]:
    """Compose ``locomo_exp/conf/config.yaml`` with overrides and return the typed config
    (names checked against the registries, as on the command line)."""
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):

        def _compose(*overrides: str) -> ExperimentConfig:
            composed = compose(config_name="config", overrides=list(overrides))
            return to_experiment_config(composed, registry_name_problems)

        yield _compose
    GlobalHydra.instance().clear()
