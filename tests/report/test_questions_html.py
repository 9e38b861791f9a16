"""questions.html (issue 30 §3): every row, self-contained, sortable and filterable in the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from locomo_exp.report.questions_html import compare_table, run_table, write_questions_html
from locomo_exp.results.questions import QuestionRow, Verdict, flips, verdict_from_score


def _row(qid: str, passed: bool | None, f1: float, reason: str = "") -> QuestionRow:
    return QuestionRow(qid, f"question {qid}", "temporal", f"pred {qid}", "gold </script>",
                       {"f1": f1}, (Verdict("judge", passed, None, reason, "m"),))


def _island(page: str) -> dict[str, list]:
    found = re.search(r"<script id='rows' type='application/json'>(.*?)</script>", page, re.S)
    assert found is not None
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_page_holds_every_row_and_loads_nothing_from_outside(tmp_path: Path) -> None:
    rows = [_row(str(i), i % 2 == 0, i / 1000, reason=f"r{i}") for i in range(1500)]
    path = write_questions_html(tmp_path, "run", run_table(rows))
    page = path.read_text(encoding="utf-8")
    data = _island(page)
    assert data["columns"] == ["question_id", "kind", "question", "gold", "prediction", "f1",
                               "judge", "reason"]
    assert len(data["rows"]) == 1500  # every row, past MLflow's 1,000
    assert data["rows"][3] == ["3", "temporal", "question 3", "gold </script>", "pred 3",
                               0.003, "wrong", "r3"]
    assert "http://" not in page and "https://" not in page and " src=" not in page
    assert "sort(" in page and "addEventListener('click'" in page  # sorting in the page


def test_flips_count_only_questions_both_runs_scored() -> None:
    a = [_row("1", True, 1), _row("2", False, 0), _row("3", None, 0), _row("4", True, 1)]
    b = [_row("1", False, 0), _row("2", True, 1), _row("3", True, 1), _row("4", True, 1)]
    found = flips(list(zip(a, b, strict=True)))
    assert found == [("1", "1", "lost"), ("2", "2", "gained")]
    # independent count: the discordant pairs of the 2x2 table on rows both scored
    both = [(x.headline.passed, y.headline.passed) for x, y in zip(a, b, strict=True)
            if x.headline.passed is not None and y.headline.passed is not None]
    assert sum(1 for x, y in both if x and not y) == 1 and sum(1 for x, y in both if y and not x) == 1
    columns, records = compare_table(list(zip(a, b, strict=True)), ("memobase", "zep"))
    flip_col = columns.index("flip")
    assert [r[flip_col] for r in records] == ["lost", "gained", "", ""]


def test_a_score_at_the_threshold_passes() -> None:
    assert verdict_from_score("judge", 50.0).passed is True
    assert verdict_from_score("judge", 49.9).passed is False
    assert verdict_from_score("judge", None).passed is None
