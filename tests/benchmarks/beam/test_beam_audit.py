"""Audit controls of judged BEAM runs: rubric items judged against responses of known verdict.

Invented answers and rubrics (no BEAM excerpt). The fake judge is scripted per prompt so that
every rate is worked out by hand: the item's own content gets 1 except for item 1 (0.5: a
false reject under both profiles), "I don't know." gets 0 except for item 2 (0.5: a false
accept under beam-nugget's clamp, none under beam-official's int()), another ability's item 0.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from beam_helpers import mem0_file, mem0_row
from fake_anthropic import Reply, text

from locomo_exp.benchmarks.beam.audit import BEAM_KINDS, build_beam_controls
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.judge import JudgeError

ABILITIES = ("abstention", "summarization", "knowledge_update")
ITEM_RE = re.compile(r"<rubric_item>\n(.*?)\n</rubric_item>", re.S)
ANSWER_RE = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)
Z95 = 1.959963984540054


def _rows() -> list[dict[str, Any]]:
    rows = []
    for chat in range(2):
        for position, ability in enumerate(ABILITIES):
            n = 1 + position  # 1, 2, 3 items: 12 items in all, 10 outside abstention
            row = mem0_row(chat, position, ability, [None] * n,
                           answer=f"Invented answer of chat {chat}.")
            row["rubric"] = [f"invented fact {chat}.{position}.{k} is named" for k in range(n)]
            row["cutoff_results"]["top_10"]["nugget_scores"] = []
            rows.append(row)
    return rows


def _respond(request: Any) -> Reply:
    item = ITEM_RE.search(request.prompt).group(1)  # type: ignore[union-attr]
    answer = ANSWER_RE.search(request.prompt).group(1)  # type: ignore[union-attr]
    k = int(item.split(".")[2].split()[0])
    if answer == item:
        score: float = 0.5 if k == 1 else 1
    elif answer == "I don't know.":
        score = 0.5 if k == 2 else 0
    else:
        score = 0  # the run's own answers and other_gold
    return text(json.dumps({"score": score, "reason": "invented"}))


def _cfg(typed_config: Any, tmp_path: Path, server: Any, *extra: str) -> Any:
    mem0_file(tmp_path / "answers.json", _rows())
    return typed_config(
        "data=file", "tracking=none", "benchmark=beam", "scorer=judge",
        f"data.path={tmp_path / 'answers.json'}", f"judge.base_url={server.url}",
        "judge.progress=false", f"judge.cache_path={tmp_path / 'cache.sqlite'}", *extra)


def wilson(k: int, n: int) -> tuple[float, float]:  # Wilson 1927, by hand
    p = k / n
    centre = p + Z95**2 / (2 * n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return (centre - half) / (1 + Z95**2 / n), (centre + half) / (1 + Z95**2 / n)


def _check_rate(block: dict[str, Any], k: int, n: int) -> None:
    assert (block["count"], block["n"]) == (k, n)
    assert block["rate"] == pytest.approx(k / n)
    low, high = wilson(k, n)
    assert block["ci_low"] == pytest.approx(low) and block["ci_high"] == pytest.approx(high)


def test_controls_are_judged_per_item_with_the_runs_judge_and_give_hand_worked_rates(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    fake_anthropic.responder = _respond
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.audit.max_share=null")
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    # 12 rubric items + 12 gold_as_answer + 12 other_gold + 10 non_answer controls
    assert len(fake_anthropic.messages_requests()) == 46
    audit = result.summary["judge"]["audit"]
    assert {k: v["n"] for k, v in audit["kinds"].items()} == {
        "gold_as_answer": 12, "other_gold": 12, "non_answer": 10}
    _check_rate(audit["kinds"]["gold_as_answer"], 4, 12)  # item 1 of the 4 questions with 2+
    _check_rate(audit["kinds"]["non_answer"], 2, 10)  # item 2: 0.5 clamps to 0.5 > 0
    _check_rate(audit["kinds"]["other_gold"], 0, 12)
    _check_rate(audit["false_accept"], 2, 22)
    _check_rate(audit["false_reject"], 4, 12)
    assert audit["gate"]["state"] == "not set" and result.exit_status == 0
    # the controls never enter the figures: every real answer scored 0
    assert result.summary["figures"]["beam-nugget"]["overall"]["avg_score"] == 0.0
    console = "\n".join(result.console)
    assert ("Judge audit (34 rubric-item controls, 95% Wilson intervals): false-accept rate "
            "9.1% [2.5, 27.8] (2/22), false-reject rate 33.3% [13.8, 60.9] (4/12)") in console
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| non_answer | 0 | 10 | 0 | false accept 20.0% [5.7, 51.0] (2/10) |" in report
    # the run log's spend is the whole job's: the 12 item calls and the 34 controls
    spend, judge = result.summary["run_log"]["judge"], result.summary["judge"]
    assert spend["calls"] == 46 == judge["counts"]["calls_made"] + audit["counts"]["calls_made"]
    assert spend["input_tokens"] == judge["tokens"]["input"] + audit["tokens"]["input"]
    assert spend["cost_usd"] == pytest.approx(
        judge["estimated_cost_usd"] + audit["estimated_cost_usd"])
    assert spend["cost_usd"] > judge["estimated_cost_usd"] > 0
    # a re-run pays nothing: items and controls are cached
    again = run_beam(cfg, tmp_path / "out2", tmp_path)
    assert len(fake_anthropic.messages_requests()) == 46
    assert again.summary["run_log"]["judge"]["calls"] == 0
    assert again.summary["run_log"]["judge"]["cost_usd"] == 0.0
    assert again.summary["run_log"]["judge"]["cost_in_all_usd"] == pytest.approx(
        spend["cost_usd"])
    assert again.summary["judge"]["audit"]["kinds"] == audit["kinds"]
    assert again.summary["judge"]["audit"]["cache_hits"] == 34


def test_official_profile_reads_controls_by_int_so_a_half_is_no_false_accept(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    fake_anthropic.responder = _respond
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.audit.max_share=null",
               "beam.profile=official")
    audit = run_beam(cfg, tmp_path / "out", tmp_path).summary["judge"]["audit"]
    _check_rate(audit["kinds"]["non_answer"], 0, 10)  # int(0.5) = 0
    _check_rate(audit["kinds"]["gold_as_answer"], 4, 12)  # int(0.5) = 0 < 1
    assert "beam-official item rule" in audit["rule"]


def test_the_gate_fails_the_run_after_its_outputs_are_written(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    fake_anthropic.responder = _respond
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.audit.max_share=null",
               "judge.audit.max_false_reject=0.2")
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    assert result.exit_status == 1 and (tmp_path / "out" / "summary.json").is_file()
    assert ("error: judge audit failed: false-reject rate 33.3% (4/12) on gold_as_answer "
            "exceeds judge.audit.max_false_reject=20.0%") in "\n".join(result.console)


def test_max_share_caps_the_controls_and_the_dry_run_counts_them(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.dry_run=true")  # max_share 0.25
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    assert fake_anthropic.messages_requests() == []
    estimate = result.summary["judge"]["dry_run_estimate"]
    # floor(0.25 x 12 item calls) = 3 controls: one per kind
    assert (estimate["calls_total"], estimate["audit_calls_to_make"],
            estimate["total_calls_to_make"]) == (12, 3, 15)
    assert "capped at 25% of the 12 rubric-item calls" in estimate["audit_sizing"]
    assert "1 control(s) per kind instead of judge.audit.n=50" in estimate["audit_sizing"]
    assert estimate["total_estimated_cost_usd"] == pytest.approx(
        estimate["estimated_cost_usd"] * 15 / 12, rel=0.2)
    assert "+ 3 audit control calls" in "\n".join(result.console)


def test_the_spend_cap_counts_the_audit_and_refuses_before_any_call(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    dry = run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.dry_run=true",
                        "judge.audit.max_share=null"), tmp_path / "dry", tmp_path)
    estimate = dry.summary["judge"]["dry_run_estimate"]
    items_only = estimate["estimated_cost_usd"]
    assert estimate["total_estimated_cost_usd"] > 2 * items_only  # 34 controls vs 12 items
    cap = f"judge.max_cost_usd={2 * items_only:.6f}"  # the items fit, items + audit do not
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.audit.max_share=null", cap)
    with pytest.raises(JudgeError) as error:
        run_beam(cfg, tmp_path / "out", tmp_path)
    assert "46 calls to make (12 rubric item, 34 audit)" in str(error.value)
    assert fake_anthropic.messages_requests() == []
    assert list((tmp_path / "out").iterdir()) == []  # nothing written (checked writable only)


def test_controls_are_sampled_per_kind_reproducibly_and_never_from_the_same_words() -> None:
    from locomo_exp.benchmarks.beam.judged import item_records
    from locomo_exp.benchmarks.beam.rows import BeamInput, BeamQuestion

    qs = tuple(BeamQuestion(f"1K_0_q{i}_{a}", "1K_0", a, i, "q?", (f"fact {i} named",
                                                                   "shared words"), "ans")
               for i, a in enumerate(ABILITIES))
    inp = BeamInput(Path("x.json"), "0" * 64, "mem0-memory-benchmarks", None, qs)
    records = item_records(inp, template=False)
    controls = build_beam_controls(inp, records, n=50, seed=3, kinds=BEAM_KINDS)
    again = build_beam_controls(inp, records, n=50, seed=3, kinds=BEAM_KINDS)
    assert [c.record for c in controls] == [c.record for c in again]
    others = [c for c in controls if c.kind == "other_gold"]
    # "shared words" has no other-ability item that differs except the "fact i named" ones
    assert all(c.record.prediction != c.record.ground_truth for c in others)
    assert {c.record.prediction for c in others} <= {f"fact {i} named" for i in range(3)}
    assert len([c for c in controls if c.kind == "non_answer"]) == 4  # abstention left out
    two = build_beam_controls(inp, records, n=2, seed=3, kinds=("gold_as_answer",))
    assert len(two) == 2 and all(c.expected_accept for c in two)


def test_each_judged_control_is_a_tagged_row_of_the_question_browser(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    """Issue 30 §1 for BEAM: the 34 controls of the hand-worked run above are rows of their own
    in questions.html, tagged with their kind; ``audit.error`` is 1 on the 2 false accepts and
    the 4 false rejects counted there, 0 on the other 28."""
    fake_anthropic.responder = _respond
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.audit.max_share=null")
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    page = (tmp_path / "out" / "questions.html").read_text(encoding="utf-8")
    found = re.search(r"<script id='rows' type='application/json'>(.*?)</script>", page, re.S)
    assert found is not None
    data = json.loads(found.group(1).replace("<\\/", "</"))
    columns = data["columns"]
    kind_col, error_col = columns.index("audit.control"), columns.index("audit.error")
    controls = [row for row in data["rows"] if row[kind_col]]
    kinds = [row[kind_col] for row in controls]
    assert {kind: kinds.count(kind) for kind in set(kinds)} == {
        "gold_as_answer": 12, "other_gold": 12, "non_answer": 10}
    assert sum(row[error_col] for row in controls) == 2 + 4
    assert len(data["rows"]) == 6 + 34  # the six questions, then the controls
    verdicts = result.summary["judge"]["audit"]["verdicts"]
    assert sorted(row[0] for row in controls) == sorted(verdicts)
