"""The audit must not surprise anyone's bill (issue 18 §5).

Each control is judged once by default, and the audit's calls are capped at 25% of the
answers' calls (fewer controls per kind) unless the user lifts the cap; the preflight line
and the dry run say so.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, Composer
from fake_anthropic import FakeAnthropicServer, make_judge_config

from locomo_exp.config import JudgeAuditConfig
from locomo_exp.data.read_file import load_results
from locomo_exp.judge.preflight import judged_records
from locomo_exp.trust.budget import audit_budget, audit_note, cap_controls
from locomo_exp.trust.job import plan_trust

EXAMPLE = PROJECT_ROOT / "locomo_exp" / "example" / "qa_results.json"


@pytest.mark.parametrize(
    ("per_n", "n", "budget", "expected_n"),
    [
        pytest.param([0, 7, 13, 18, 22, 25], 5, 20, 3, id="fits-at-3"),
        pytest.param([0, 7, 13, 18, 22, 25], 5, 25, 5, id="all-fit"),
        pytest.param([0, 7, 13, 18, 22, 25], 5, 6, 0, id="none-fits"),
        pytest.param([0, 7, 13, 18, 22, 25], 5, None, 5, id="no-cap"),
        pytest.param([0, 7, 7, 7, 9, 9], 5, 8, 3, id="plateau-takes-the-largest-n"),
    ],
)
def test_cap_controls_takes_the_largest_n_per_kind_that_fits(
    per_n: list[int], n: int, budget: int | None, expected_n: int
) -> None:
    def build(k: int) -> list[object]:
        return [object()] * per_n[k]

    controls, used = cap_controls(build, n, budget)  # type: ignore[arg-type]
    brute = max(k for k in range(n + 1) if budget is None or per_n[k] <= budget)
    assert used == brute == expected_n
    assert len(controls) == per_n[expected_n]


def _cfg(server: FakeAnthropicServer, tmp_path: Path, **audit: object):  # type: ignore[no-untyped-def]
    return make_judge_config(server, tmp_path, runs=10, audit=JudgeAuditConfig(**audit))


def test_the_projects_example_at_ten_runs_audits_at_most_a_quarter_of_the_answer_calls(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    records = load_results(EXAMPLE).records
    cfg = _cfg(fake_anthropic, tmp_path)
    n_judged = len(judged_records(records, cfg))
    assert n_judged * cfg.runs == 160  # the example: 160 answer calls
    uncapped = plan_trust(records, replace(cfg, audit=JudgeAuditConfig(max_share=None, runs=None)),
                          start_dir=tmp_path)
    assert uncapped.audit_calls == 530  # before: 53 controls x 10 runs (+331%)
    with caplog.at_level(logging.INFO, logger="locomo_exp.trust.plan"):
        plan = plan_trust(records, cfg, start_dir=tmp_path)
    assert audit_budget(cfg, n_judged) == 40
    assert plan.audit_calls == len(plan.controls) <= 40  # one run per control
    assert len(plan.controls) > 0
    line = [r.getMessage() for r in caplog.records if r.getMessage().startswith("judge audit:")]
    assert line == [
        f"judge audit: {len(plan.controls)} controls x 1 run(s) = {plan.audit_calls} extra judge "
        f"calls ({100 * plan.audit_calls / 160:.0f}% of the 160 calls for the answers); "
        + plan.audit_note
    ]
    assert plan.audit_note.startswith(
        "each control judged 1x (judge.audit.runs); capped at 25% of the 160 answer calls "
        "(judge.audit.max_share; null for no cap): "
    )
    assert plan.audit_note.endswith("control(s) per kind instead of judge.audit.n=50")


def test_lifting_the_cap_judges_every_control_once(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = load_results(EXAMPLE).records
    plan = plan_trust(records, _cfg(fake_anthropic, tmp_path, max_share=None), start_dir=tmp_path)
    assert plan.audit_calls == len(plan.controls) == 53
    assert plan.audit_note == (
        "each control judged 1x (judge.audit.runs); no cap (judge.audit.max_share=null)"
    )


def test_a_cap_too_small_for_one_control_per_kind_turns_the_audit_off_with_a_warning(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    records = load_results(EXAMPLE).records
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, audit=JudgeAuditConfig())
    with caplog.at_level(logging.WARNING, logger="locomo_exp.trust.plan"):
        plan = plan_trust(records, cfg, start_dir=tmp_path)
    assert plan.controls == [] and plan.audit_calls == 0  # 25% of 16 calls: 4 < 7 kinds
    assert any(
        r.getMessage().startswith("judge audit: no control judged; ") for r in caplog.records
    )


@pytest.mark.parametrize(
    ("override", "message"),
    [
        pytest.param("judge.audit.max_share=1.5", "judge.audit.max_share=1.5 must be a share between 0 and 1 (or null: no cap)", id="share"),
        pytest.param("judge.audit.runs=0", "judge.audit.runs=0 must be >= 1 (or null: judge.runs)", id="runs"),
    ],
)
def test_audit_sizing_settings_are_checked_before_any_call(
    typed_config: Composer, override: str, message: str
) -> None:
    from locomo_exp.config import ConfigValueError

    with pytest.raises(ConfigValueError) as refused:
        typed_config(override)
    assert str(refused.value) == message


def test_the_dry_run_says_how_the_audit_was_sized(
    typed_config: Composer, tmp_path: Path
) -> None:
    from locomo_exp.experiment import run_experiment

    result = run_experiment(
        typed_config("scorer=judge", "data=example", "tracking=none", "judge.dry_run=true",
                     "judge.runs=10", f"judge.cache_path={tmp_path}/c.sqlite"),
        tmp_path / "out", PROJECT_ROOT,
    )
    estimate = result.summary["judge"]["dry_run_estimate"]
    assert estimate["audit_calls_to_make"] <= 40
    assert estimate["audit_sizing"].startswith(
        "each control judged 1x (judge.audit.runs); capped at 25% of the 160 answer calls"
    )
    assert audit_note  # exported


def test_kinds_short_of_n_are_one_line_after_the_sizing_not_one_per_build(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The trial's dry run logged ~40 'audit: <kind> has N eligible records' lines."""
    from collections import Counter

    records = load_results(EXAMPLE).records
    with caplog.at_level(logging.INFO, logger="locomo_exp.trust"):
        plan = plan_trust(records, _cfg(fake_anthropic, tmp_path), start_dir=tmp_path)
    audit_lines = [r.getMessage() for r in caplog.records
                   if r.levelno >= logging.INFO and r.getMessage().startswith("audit:")]
    per_kind = Counter(c.kind for c in plan.controls)
    n_used = max(per_kind.values())  # 11 per kind after the 25% cap (audit_note says so)
    assert f"{n_used} control(s) per kind instead of judge.audit.n=50" in plan.audit_note
    short = [f"{kind} {per_kind.get(kind, 0)}" for kind in JudgeAuditConfig().kinds
             if per_kind.get(kind, 0) < n_used]
    assert audit_lines == [
        f"audit: fewer eligible records than n={n_used} per kind: {', '.join(short)}"
    ]
    assert short == ["adversarial_trap 0", "perturbed_date 4", "perturbed_number 1",
                     "perturbed_name 0"]
