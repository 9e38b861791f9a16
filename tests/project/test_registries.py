"""Every registry entry is handled everywhere it must be: compare, report, tracking, card.

One test per registry, parametrised over its entries, so a new entry that some output does
not handle fails here by name: the lexical metrics (``scoring.specs.LEXICAL_SPECS``), the
judge protocols (``judge.protocols.PROTOCOLS``) and the file layouts
(``data.layouts.LAYOUTS``). ``tests/project/test_registry_additions.py`` adds a dummy entry of
each kind to a copy of the package and checks it reaches the outputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import FIXTURES, PROJECT_ROOT

from locomo_exp.compare.metrics import COMPARED_BY_NAME, F1_VARIANT_METRICS, JUDGE_METRICS
from locomo_exp.config import DataConfig, F1Variant
from locomo_exp.data.detect import detect_layout
from locomo_exp.data.layouts import FORMATS, LAYOUTS, LOCOMO, expected_layouts_message
from locomo_exp.data.read_file import load_results
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.protocols import PROTOCOLS, available_protocols
from locomo_exp.report.card import build_card, render_card_markdown
from locomo_exp.scoring.specs import LEXICAL_SPECS, METRIC_TITLES
from locomo_exp.sweep.vs_baseline import compared_columns
from locomo_exp.tracking.metrics import input_params, run_metrics
from locomo_exp.trust.panel import judge_panel

EXAMPLE = PROJECT_ROOT / "locomo_exp" / "example" / "qa_results.json"

LAYOUT_SAMPLES: dict[str, Path] = {
    "qa_results": EXAMPLE,
    "locomo": FIXTURES / "locomo_format.json",
    "mem0": FIXTURES / "mem0_format.json",
    "fields": FIXTURES / "zep_like.json",
}
"""A small file of each LoCoMo layout; a new layout needs one here."""


def _run(typed_config: Any, tmp_path: Path, *overrides: str) -> dict[str, Any]:
    """Score with tracking off; the run directory's outputs as text/JSON."""
    from locomo_exp.experiment import run_experiment

    cfg = typed_config("tracking=none", *overrides)
    out = tmp_path / "run"
    run_experiment(cfg, out, PROJECT_ROOT)
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    return {
        "summary": json.loads((out / "summary.json").read_text()),
        "card": json.loads((out / "card.json").read_text()),
        "report": (out / "report.md").read_text(),
        "rows": rows,
        "config": yaml.safe_load((out / "config.yaml").read_text()),
    }


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The example scored once with F1 and BLEU-1 (every lexical metric)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from locomo_exp.config import register_configs, to_experiment_config

    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(
        version_base="1.3", config_dir=str(PROJECT_ROOT / "locomo_exp" / "conf")
    ):
        run = _run(
            lambda *o: to_experiment_config(compose(config_name="config", overrides=list(o))),
            tmp_path_factory.mktemp("example"),
        )
    GlobalHydra.instance().clear()
    return run


# ----------------------------------------------------------------------- lexical metrics


@pytest.mark.parametrize("spec", LEXICAL_SPECS, ids=lambda s: s.metric)
def test_every_lexical_metric_is_scored_reported_tracked_compared_and_carded(
    spec: Any, example_run: dict[str, Any]
) -> None:
    summary = example_run["summary"]
    # scores.jsonl and summary.json
    assert all(spec.metric in row for row in example_run["rows"])
    assert spec.metric in summary["metrics"]
    # report: a column titled by the spec
    assert METRIC_TITLES[spec.metric] == spec.title
    assert f"| {spec.title} |" in example_run["report"]
    # MLflow: percent per group
    logged = run_metrics(summary, {})
    assert logged[f"{spec.metric}/overall"] == pytest.approx(
        100 * summary["metrics"][spec.metric]["overall"]["mean"]
    )
    # compare: same field, the spec's short title, points
    compared = COMPARED_BY_NAME[spec.metric]
    assert (compared.field, compared.label, compared.scale) == (spec.metric, spec.short_title, 100)
    assert (spec.metric in F1_VARIANT_METRICS) == (spec.kind == "f1")
    # card and versions
    config = {**example_run["config"], "f1": {"variant": spec.name, "bleu1": True}}
    versions = {**summary["versions"], spec.metric: spec.version}
    card = build_card(config, {**summary, "versions": versions}, argv=[])
    if spec.kind == "f1":
        assert card["f1"] == {"variant": spec.name, "version": spec.version}
        assert f"- F1: {spec.name} ({spec.version})" in render_card_markdown(card)
    else:
        assert card[spec.metric] == {"version": spec.version}


@pytest.mark.parametrize("spec", [s for s in LEXICAL_SPECS if s.kind == "f1"], ids=lambda s: s.name)
def test_every_f1_variant_is_a_config_choice_with_a_preset_and_a_sweep_column(spec: Any) -> None:
    assert F1Variant(spec.name).value == spec.name
    preset = PROJECT_ROOT / "locomo_exp" / "conf" / "f1" / f"{spec.name}.yaml"
    assert yaml.safe_load(preset.read_text())["variant"] == spec.name
    assert compared_columns(spec.name)["f1"] == spec.metric


def test_compare_lists_the_lexical_registry_then_the_judge_metrics() -> None:
    assert list(COMPARED_BY_NAME) == [s.metric for s in LEXICAL_SPECS] + [
        m.name for m in JUDGE_METRICS
    ]
    assert list(compared_columns(None)) == ["f1", "j", "stored_j"]


# ----------------------------------------------------------------------- judge protocols


def _reply(spec: Any) -> tuple[str, float]:
    """A valid JSON reply of the protocol and the score it must give (its highest)."""
    if spec.label_scores:
        label, score = max(spec.label_scores.items(), key=lambda item: item[1])
        return json.dumps({spec.verdict_field: label, "explanation": "same fact"}), score
    return json.dumps({spec.verdict_field: 100, "explanation": "same fact"}), 100.0


@pytest.mark.parametrize("spec", list(PROTOCOLS.values()), ids=list(PROTOCOLS))
def test_every_protocol_is_parsed_accepted_by_config_panel_and_card(
    spec: Any, typed_config: Any
) -> None:
    assert spec.name in available_protocols()
    # config: judge.protocol and a baseline's j_protocol take the name
    assert typed_config(f"judge.protocol={spec.name}").judge.protocol == spec.name
    # parser: a reply in the protocol's own format gives its score
    text, score = _reply(spec)
    parsed = parse_judge_reply(text, spec)
    assert parsed.ok and parsed.score == score
    # trust: the accept threshold is on the 0-100 scale and decides the panel's majority
    assert 0 < spec.accept_threshold <= 100
    at, below = spec.accept_threshold, spec.accept_threshold - 1
    panel = judge_panel({"a": {"q": at, "r": below}, "b": {"q": at, "r": below}}, protocol=spec)
    assert panel.verdicts == {"q": 100.0, "r": 0.0}
    assert panel.alpha_level == spec.krippendorff_level in ("interval", "nominal")
    assert panel.protocol == spec.name
    # card (and the report's card block) name the protocol
    judge = {"model": "m", "protocol": spec.name, "prompt_version": spec.prompt_version}
    card = build_card({}, {"judge": judge}, argv=[])
    assert card["judge"]["protocol"] == spec.name
    assert f"protocol {spec.name}, prompt {spec.prompt_version}" in render_card_markdown(card)


# ----------------------------------------------------------------------------- layouts


def test_every_layout_is_a_data_format_and_named_in_the_detection_error() -> None:
    assert FORMATS == ("auto", *(s.name for s in LAYOUTS))
    message = expected_layouts_message()
    for spec in LAYOUTS:
        assert (spec.looks_for in message) == (spec.benchmark == LOCOMO), spec.name
    assert set(LAYOUT_SAMPLES) == {s.name for s in LAYOUTS if s.benchmark == LOCOMO}, (
        "add a small sample file of the new layout to LAYOUT_SAMPLES"
    )


@pytest.mark.parametrize("name", list(LAYOUT_SAMPLES))
def test_every_layout_is_detected_and_named_in_summary_card_report_and_mlflow(
    name: str, typed_config: Any, tmp_path: Path
) -> None:
    path = LAYOUT_SAMPLES[name]
    assert load_results(path).format == name  # detected with no option
    run = _run(typed_config, tmp_path, "data=file", f"data.path={path}")
    assert run["summary"]["input"]["format"] == name
    assert run["card"]["input"]["format"] == name
    assert f"format `{name}`" in run["report"] or f"format {name})" in run["report"]
    params = input_params(sha256="s", format_detected=name, f1_version="v")
    assert params["data.format_detected"] == name


@pytest.mark.parametrize("spec", [s for s in LAYOUTS if s.own_f1], ids=lambda s: s.name)
def test_a_layouts_own_f1_is_named_when_the_run_reports_another(
    spec: Any, typed_config: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert spec.own_f1 in {m.value for m in F1Variant}  # a registered F1 variant
    other = next(m.value for m in F1Variant if m.value != spec.own_f1)
    path = LAYOUT_SAMPLES[spec.name]
    with caplog.at_level("INFO", logger="locomo_exp.benchmarks.locomo.steps"):
        _run(typed_config, tmp_path / "other", "data=file", f"data.path={path}", f"f1={other}")
        said = [r.getMessage() for r in caplog.records if "whose harness reports" in r.getMessage()]
        assert said == [
            f"{path.name} has the {spec.name} layout, whose harness reports F1 as "
            f"f1={spec.own_f1}; the reported F1 here is f1_{other} (all variants are in the report)"
        ]
        caplog.clear()
        _run(typed_config, tmp_path / "own", "data=file", f"data.path={path}", f"f1={spec.own_f1}")
        assert not [r for r in caplog.records if "whose harness reports" in r.getMessage()]


def test_a_layout_of_another_benchmark_is_refused_by_locomo_loading_in_one_line() -> None:
    for spec in LAYOUTS:
        if spec.benchmark != LOCOMO:
            with pytest.raises(ValueError, match=f"benchmark={spec.benchmark}"):
                detect_layout([{"question_id": "q", "hypothesis": "h"}], DataConfig(format=spec.name))


# ---------------------------------------------------------------------------- providers


def _preset_providers() -> dict[str, str]:
    """``conf/judge`` preset -> its provider (a preset without one uses the default)."""
    from locomo_exp.llm.providers import PROVIDERS

    default = next(iter(PROVIDERS))
    presets = (PROJECT_ROOT / "locomo_exp" / "conf" / "judge").glob("*.yaml")
    return {p.stem: (yaml.safe_load(p.read_text()) or {}).get("provider", default) for p in presets}


def _providers() -> list[str]:
    from locomo_exp.llm.providers import PROVIDERS

    return list(PROVIDERS)


@pytest.mark.parametrize("name", _providers())
def test_every_provider_has_a_client_module_a_preset_and_is_named_in_the_summary(
    name: str, typed_config: Any
) -> None:
    import importlib
    from dataclasses import replace

    from locomo_exp.judge.preflight import provider_problems
    from locomo_exp.llm.providers import endpoint, get_provider, sdk_installed

    spec = get_provider(name)
    if sdk_installed(spec):  # the client module imports the SDK
        assert callable(importlib.import_module(spec.module).make_client)
    presets = [preset for preset, provider in _preset_providers().items() if provider == name]
    assert presets, f"no conf/judge preset uses provider {name}"
    cfg = typed_config(f"judge={presets[0]}").judge
    assert cfg.provider == name
    assert provider_problems(replace(cfg, dry_run=True)) == []
    where = endpoint(cfg)
    assert where["provider"] == name and where["endpoint"] == spec.default_base_url.rstrip("/")
    assert spec.title and spec.key_env and spec.max_batch_requests > 0
