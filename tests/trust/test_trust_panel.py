"""A panel of judges: J per model, majority verdicts and ties, Krippendorff's alpha
(checked by hand), pairwise kappa, cost multiplier."""

from __future__ import annotations

from fractions import Fraction

import pytest

from locomo_exp.judge.protocols import get_protocol
from locomo_exp.trust.panel import judge_panel, panel_cost_multiplier

BINARY = get_protocol("binary")

QIDS = [f"q{i}" for i in range(10)]


def _model(accepted: set[int], unscored: set[int] = frozenset()) -> dict[str, float | None]:
    return {
        f"q{i}": None if i in unscored else (100.0 if i in accepted else 0.0) for i in range(10)
    }


A = _model({0, 1, 2, 3, 4, 5})
B = _model({0, 1, 2, 3, 6})
C = _model({0, 1, 2, 4, 6}, unscored={9})


def test_two_judges_disagreeing_on_three_questions() -> None:
    panel = judge_panel({"haiku": A, "sonnet": B}, protocol=BINARY)
    assert panel.j_per_model == {"haiku": 60.0, "sonnet": 50.0}
    assert panel.n_per_model == {"haiku": 10, "sonnet": 10}
    # two judges: the panel only decides where they agree; q4, q5, q6 are ties
    assert panel.unscored_reasons == {q: "tie: 1 accept, 1 reject" for q in ("q4", "q5", "q6")}
    assert panel.n_panel_scored == 7
    assert panel.panel_j == pytest.approx(100 * 4 / 7)
    # Krippendorff's alpha (nominal), by hand: o11 = 8, o00 = 6, o10 = o01 = 3, n = 20,
    # n1 = 11, n0 = 9; D_o = 6/20, D_e = 2*11*9 / (20*19); alpha = 1 - D_o/D_e = 84/198
    d_o, d_e = Fraction(6, 20), Fraction(2 * 11 * 9, 20 * 19)
    assert 1 - d_o / d_e == Fraction(84, 198)
    assert panel.alpha_level == "nominal"
    assert panel.alpha == pytest.approx(84 / 198, abs=1e-12)
    # pairwise kappa: tp 4, fn 2, fp 1, tn 3; p_o = 0.7, p_e = (6*5 + 4*5)/100 = 0.5
    pair = panel.pairwise[("haiku", "sonnet")]
    assert pair.table == ((4, 2), (1, 3))
    assert pair.kappa == pytest.approx(0.4) and pair.agreement.rate == pytest.approx(0.7)
    assert panel.cost_multiplier == 2.0


def test_three_judges_majority_with_an_unscored_vote() -> None:
    panel = judge_panel({"a": A, "b": B, "c": C}, protocol=BINARY)
    assert panel.verdicts == {
        "q0": 100.0,
        "q1": 100.0,
        "q2": 100.0,
        "q3": 100.0,
        "q4": 100.0,
        "q5": 0.0,
        "q6": 100.0,
        "q7": 0.0,
        "q8": 0.0,
        "q9": 0.0,
    }
    assert panel.panel_j == 60.0 and panel.unscored_reasons == {}
    assert panel.j_per_model["c"] == pytest.approx(100 * 5 / 9) and panel.n_per_model["c"] == 9
    # by hand: o11 = 9 + 1 + 1 + 1 = 12, o10 = o01 = 4, o00 = 1 + 6 + 2 = 9; n = 29,
    # n1 = 16, n0 = 13; alpha = 1 - (8/29) / (2*16*13 / (29*28)) = 6/13
    assert panel.alpha == pytest.approx(6 / 13, abs=1e-12)
    assert set(panel.pairwise) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert panel.pairwise[("a", "c")].n == 9
    assert panel.cost_multiplier == 3.0


def test_ties_with_a_missing_vote_and_no_votes_are_unscored_with_reasons() -> None:
    a = {"x": 100.0, "y": None, "z": 0.0}
    b = {"x": 0.0, "y": None, "z": 0.0}
    c = {"x": None, "y": None, "z": 100.0}
    panel = judge_panel({"a": a, "b": b, "c": c}, protocol=BINARY)
    assert panel.unscored_reasons == {
        "x": "tie: 1 accept, 1 reject, 1 without a verdict",
        "y": "no judge of the panel gave a verdict",
    }
    assert panel.verdicts["z"] == 0.0 and panel.panel_j == 0.0


def test_rubric_panel_uses_interval_alpha_checked_by_hand() -> None:
    # A = 10, 20, 30; B = 10, 30, 30. D_o = 200/6, D_e = 5800/30, alpha = 1 - 5/29 = 24/29
    panel = judge_panel(
        {"a": {"1": 10.0, "2": 20.0, "3": 30.0}, "b": {"1": 10.0, "2": 30.0, "3": 30.0}},
        protocol=get_protocol("rubric"),
    )
    assert panel.alpha_level == "interval"
    assert panel.alpha == pytest.approx(24 / 29, abs=1e-12)
    assert panel.j_per_model == {"a": 20.0, "b": pytest.approx(70 / 3)}
    assert panel.panel_j == 0.0  # every score < 50: rejected by both


def test_alpha_is_none_when_everyone_agrees_on_one_value() -> None:
    panel = judge_panel(
        {"a": {"1": 100.0, "2": 100.0}, "b": {"1": 100.0, "2": 100.0}}, protocol=BINARY
    )
    assert panel.alpha is None and panel.panel_j == 100.0


def test_cost_multiplier_with_prices_and_errors() -> None:
    assert panel_cost_multiplier(["haiku", "sonnet"], {"haiku": 1.0, "sonnet": 3.0}) == 4.0
    assert panel_cost_multiplier(
        ["sonnet", "haiku"], {"haiku": 1.0, "sonnet": 3.0}
    ) == pytest.approx(4 / 3)
    with pytest.raises(ValueError, match="judge.panel: no price for model 'opus'"):
        panel_cost_multiplier(["haiku", "opus"], {"haiku": 1.0})
    with pytest.raises(ValueError, match="judge.panel needs at least two models, got 1"):
        judge_panel({"a": A}, protocol=BINARY)


def test_a_rubric_panels_j_is_an_accept_rate_shown_beside_the_members_accept_rates() -> None:
    """Two rubric judges scoring every answer 80: J 80.00 each, accepted 100%, panel 100 --
    the panel's J sits in the accept-rate column, not beside the mean scores (trial 5 #5)."""
    from locomo_exp.report.trust import render_panel_section
    from locomo_exp.trust.summary import panel_summary

    eighty = {q: 80.0 for q in QIDS}
    mixed = {q: (80.0 if i < 7 else 20.0) for i, q in enumerate(QIDS)}  # 7 of 10 accepted
    panel = judge_panel({"a": eighty, "b": mixed}, protocol=get_protocol("rubric"))
    assert panel.j_per_model == {"a": 80.0, "b": pytest.approx((7 * 80 + 3 * 20) / 10)}
    assert panel.accept_per_model == {"a": 100.0, "b": 70.0}
    assert panel.panel_j == 100.0  # 7 agreed accepts; the 3 ties are unscored
    summary = panel_summary(panel, calls_made=0, estimated_cost_usd=None)
    text = render_panel_section(summary)
    assert "| judge | n | J (mean verdict) | accepted (%) |" in text
    assert "| a | 10 | 80.00 | 100.00 |" in text
    assert "| b | 10 | 62.00 | 70.00 |" in text
    assert "| **panel (majority)** | 7 | n/a (accept or reject) | 100.00 |" in text
    from locomo_exp.results import PanelSummary

    assert PanelSummary.from_json(summary.to_json()).accept_per_model == {"a": 100.0, "b": 70.0}
    from locomo_exp.results import TrustSummary
    from locomo_exp.tracking.trust import trust_metrics

    metrics = trust_metrics(TrustSummary(total_cost_usd=None, panel=summary))
    assert metrics["panel/a/accept_rate"] == 100.0 and metrics["panel/b/accept_rate"] == 70.0
    assert metrics["panel/j"] == 100.0
