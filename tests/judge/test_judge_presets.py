"""The ``judge`` config group: one preset per model (price, structured output, temperature)."""

from __future__ import annotations

import logging

import pytest
from conftest import Composer
from hydra.core.override_parser.overrides_parser import OverridesParser

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.preflight import check_config
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.models import accepts_temperature, model_price, uses_structured_output


@pytest.mark.parametrize(
    "preset, model, price, temperature, accepts",
    [
        pytest.param("haiku-4-5", "claude-haiku-4-5", {"input": 1.0, "output": 5.0}, 0.5, True, id="haiku-4-5"),
        pytest.param("sonnet-4-6", "claude-sonnet-4-6", {"input": 3.0, "output": 15.0}, 0.5, True, id="sonnet-4-6"),
        pytest.param("opus-4-6", "claude-opus-4-6", {"input": 5.0, "output": 25.0}, 0.5, True, id="opus-4-6"),
        pytest.param("opus-4-7", "claude-opus-4-7", {"input": 5.0, "output": 25.0}, None, False, id="opus-4-7"),
    ],
)
def test_each_preset_composes_with_its_model_price_and_support_flags(
    typed_config: Composer, preset: str, model: str, price: dict, temperature: float | None, accepts: bool
) -> None:
    judge = typed_config(f"judge={preset}", "judge.runs=10").judge
    assert (judge.model, judge.runs, judge.temperature) == (model, 10, temperature)
    assert model_price(judge) == price
    assert accepts_temperature(judge) is accepts
    assert uses_structured_output(judge) is True


def test_default_preset_is_sonnet_4_6_and_a_plain_override_still_works(typed_config: Composer) -> None:
    judge = typed_config("judge.runs=3").judge
    assert (judge.model, judge.runs) == ("claude-sonnet-4-6", 3)
    assert model_price(judge) == {"input": 3.0, "output": 15.0}
    assert judge == JudgeConfig(runs=3)  # the schema's defaults are the default preset


def test_a_sweep_over_presets_composes_one_job_per_model(typed_config: Composer) -> None:
    """What ``-m judge=haiku-4-5,sonnet-4-6 judge.runs=2`` hands each job (BasicSweeper's split)."""
    [sweep] = OverridesParser.create().parse_overrides(["judge=haiku-4-5,sonnet-4-6"])
    jobs = [typed_config(f"judge={value}", "judge.runs=2") for value in sweep.sweep_string_iterator()]
    assert [(j.judge.model, j.judge.runs, model_price(j.judge)["input"]) for j in jobs] == [
        ("claude-haiku-4-5", 2, 1.0),
        ("claude-sonnet-4-6", 2, 3.0),
    ]


def test_opus_4_7_with_a_temperature_fails_before_any_call(
    typed_config: Composer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    judge = typed_config("judge=opus-4-7", "judge.temperature=0.5").judge
    with pytest.raises(JudgeError) as raised:
        check_config(judge)
    assert str(raised.value) == (
        "invalid judge configuration: judge.model=claude-opus-4-7 does not accept a "
        "temperature (judge.model_info.temperature=false); set judge.temperature=null"
    )


@pytest.mark.parametrize(
    "model, described",
    [
        pytest.param("claude-sonnet-4-6-20260101", True, id="dated-id-of-the-preset-model"),
        pytest.param("claude-fancy-9", False, id="any-other-id"),
    ],
)
def test_a_model_override_keeps_the_preset_only_for_its_own_model(
    typed_config: Composer, model: str, described: bool
) -> None:
    judge = typed_config(f"judge.model={model}").judge
    assert judge.model == model
    assert (model_price(judge) is not None) is described
    assert accepts_temperature(judge) and uses_structured_output(judge)  # sensible defaults


def test_an_undescribed_model_can_be_described_by_its_fields(typed_config: Composer) -> None:
    judge = typed_config(
        "judge.model=claude-fancy-9", "judge.model_info.id=null", "judge.model_info.temperature=false",
        "judge.model_info.structured_output=false", "judge.model_info.input_usd_per_mtok=2",
        "judge.model_info.output_usd_per_mtok=8", "judge.temperature=null",
    ).judge
    assert model_price(judge) == {"input": 2.0, "output": 8.0}
    assert not accepts_temperature(judge) and not uses_structured_output(judge)


def test_unknown_model_cost_is_not_estimated_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    from locomo_exp.judge.job import build_run_result

    with caplog.at_level(logging.WARNING, logger="locomo_exp.judge"):
        result = build_run_result(
            {}, [], JudgeConfig(model="claude-fancy-9"), api_version="v", calls_made=0, category_names={}
        )
    assert result.summary["estimated_cost_usd"] is None
    assert "no price for model claude-fancy-9" in caplog.text
