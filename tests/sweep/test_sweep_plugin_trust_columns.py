"""The sweep tables of BEAM and LoCoMo-Plus show each job's trust figures (corrected accept
rate with its interval, the audit's false-accept and false-reject rates) from its run log, and
"not measured" where the job did not measure them (issues 28 and 29)."""

from __future__ import annotations

from typing import Any

from locomo_exp.benchmarks.beam.sweep_rows import beam_table
from locomo_exp.benchmarks.locomo_plus.sweep_rows import plus_table
from locomo_exp.benchmarks.plugin_trust import TRUST_HEADER
from locomo_exp.results.run_log import Figure, RunLog, RunSpec, TrustBrief
from locomo_exp.sweep.log_rows import log_row_fields


def _log(trust: TrustBrief | None) -> RunLog:
    return RunLog(
        benchmark="x", title="X", spec=RunSpec(scorer="judge"),
        input={"path": "p", "sha256": "0", "format": "f", "records": 2},  # type: ignore[arg-type]
        metrics={}, headline=[], trust=trust)


MEASURED = TrustBrief(
    false_accept_rate=1 / 24, false_reject_rate=1 / 12,
    corrected=Figure(name="j_corrected/overall", value=4 / 9, unit="0-1", ci_low=0.125,
                     ci_high=0.8, n=12))


def _spending(row: dict[str, Any]) -> tuple[str, list[str], str]:
    return "ok", ["10", "2"], "0.01"


def _rows() -> list[dict[str, Any]]:
    measured, unmeasured = log_row_fields(_log(MEASURED)), log_row_fields(_log(None))
    return [{"job": 0, "swept": {}, **measured}, {"job": 1, "swept": {}, **unmeasured}]


def test_a_row_copies_the_run_logs_trust_brief_and_none_where_not_measured() -> None:
    measured, unmeasured = (row["trust"] for row in _rows())
    assert measured == {"corrected": 4 / 9, "corrected_ci": [0.125, 0.8],
                        "false_accept": 1 / 24, "false_reject": 1 / 12}
    assert set(unmeasured.values()) == {None}


def _cells(lines: list[str], job: int) -> dict[str, str]:
    header = next(line for line in lines if line.startswith("| job |"))
    names = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in lines if line.startswith(f"| {job} |"))
    return dict(zip(names, (c.strip() for c in row.strip("|").split("|")), strict=True))


def test_plus_and_beam_tables_show_the_trust_columns_in_percent_or_not_measured() -> None:
    summary = {"rows": _rows(), "swept_keys": [], "baseline": {}}
    # 4/9 = 44.4%; interval 12.5-80.0%; 1/24 = 4.2%; 1/12 = 8.3%
    expected = dict(zip(TRUST_HEADER, ("44.4", "12.5–80.0", "4.2", "8.3"), strict=True))
    for table in (plus_table(summary, _spending), beam_table(summary, _spending)):
        assert any(line.startswith("- trust: corrected accept rate") for line in table)
        first, second = _cells(table, 0), _cells(table, 1)
        assert {k: first[k] for k in TRUST_HEADER} == expected
        assert [second[k] for k in TRUST_HEADER] == ["not measured", "", "not measured",
                                                     "not measured"]


def test_plus_table_has_an_f1_column_of_scorer_both_jobs_and_not_measured_otherwise() -> None:
    from locomo_exp.benchmarks.locomo_plus.sweep_rows import plus_row_fields

    head = {"n_items": 3, "n_scored": 3, "overall": 2 / 3}
    both = plus_row_fields({"readings": {"ours": head}, "verdicts": {"source": "judged"},
                            "f1": {"variant": "locomo",
                                   "factual": {"item_weighted": 0.412345, "unweighted": 0.5}}})
    judge_only = plus_row_fields({"readings": {"ours": head}, "verdicts": {"source": "judged"}})
    assert (both["plus"]["f1_factual_item_weighted"], both["plus"]["f1_factual_unweighted"]) \
        == (41.23, 50.0)  # percent, 2 decimals, as the row's other figures
    summary = {"rows": [{"job": 0, "swept": {}, **both}, {"job": 1, "swept": {}, **judge_only}],
               "swept_keys": [], "baseline": {}}
    table = plus_table(summary, _spending)
    assert _cells(table, 0)["F1 factual"] == "41.23 (locomo)"
    assert _cells(table, 1)["F1 factual"] == "not measured"
    assert _cells(table, 0)["overall"] == "66.67"
