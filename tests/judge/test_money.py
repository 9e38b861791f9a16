"""US dollar amounts are rounded to a millionth of a dollar wherever they are stored or printed."""

from __future__ import annotations

import json
from pathlib import Path

from locomo_exp.experiment import run_experiment
from locomo_exp.report.console import dry_run_lines
from locomo_exp.results.money import round_money, usd


def test_usd_rounds_the_float_noise_of_summed_prices_away() -> None:
    noisy = 0.004730549999999999  # a trial's audit_estimated_cost_usd
    assert usd(noisy) == 0.004731
    assert usd(0.1 + 0.2) == 0.3
    assert usd(None) is None


def test_round_money_rounds_under_usd_keys_only_and_leaves_the_input_alone() -> None:
    body = {
        "estimated_cost_usd": 0.1 + 0.2,
        "n": 3,
        "share": 1 / 3,
        "judge": {"trust": {"cost_usd": {"q1": 0.1 + 0.2, "q2": None}, "total_cost_usd": None}},
        "rows": [{"estimated_cost_usd": 2 / 3, "dry_run": True}],
        "input_usd_per_mtok": 0.15,
    }
    assert round_money(body) == {
        "estimated_cost_usd": 0.3,
        "n": 3,
        "share": 1 / 3,
        "judge": {"trust": {"cost_usd": {"q1": 0.3, "q2": None}, "total_cost_usd": None}},
        "rows": [{"estimated_cost_usd": 0.666667, "dry_run": True}],
        "input_usd_per_mtok": 0.15,
    }
    assert body["estimated_cost_usd"] == 0.1 + 0.2


def test_the_dry_run_block_prints_rounded_amounts() -> None:
    lines = dry_run_lines(
        {"calls_to_make": 38, "audit_estimated_cost_usd": 0.004730549999999999},
        {"provider": "openai", "model": "gpt-4o-mini"},
    )
    assert lines[-2:] == ["  calls_to_make: 38", "  audit_estimated_cost_usd: 0.004731"]


def test_summary_json_holds_no_amount_with_more_than_six_decimals(
    tmp_path: Path, typed_config  # type: ignore[no-untyped-def]
) -> None:
    cfg = typed_config("scorer=both", "judge=gpt-4o-mini", "judge.dry_run=true", "tracking=none")
    run_experiment(cfg, tmp_path / "out", tmp_path)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    amounts: list[float] = []

    def walk(obj: object, under_usd: bool = False) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                walk(value, under_usd or str(key).endswith("_usd"))
        elif isinstance(obj, list):
            for value in obj:
                walk(value, under_usd)
        elif under_usd and isinstance(obj, float):
            amounts.append(obj)

    walk(summary)
    estimate = summary["judge"]["dry_run_estimate"]
    assert estimate["audit_estimated_cost_usd"] == 0.004731  # 0.004730549999999999 before
    assert len(amounts) >= 5
    assert all(round(a, 6) == a for a in amounts)
