"""A judged BEAM run with the user's own template file: their text is sent, one call per item.

Invented answers (:mod:`test_beam_judged`'s rows: 12 rubric items); the fake judge reads the
item number from the user's text and gives the verdict :data:`test_beam_judged.VERDICT` asks
for, so the figures are those of the built-in prompt's run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_anthropic import Reply, text
from test_beam_judged import VERDICT, _answers, _cfg, _expected_nugget, _rows

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.job import run_beam

MINE = "Q={question}|ITEM={gold_answer}|ANSWER={predicted_answer}"


def _template(tmp_path: Path) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(json.dumps({"name": "mine", "version": "7", "user": MINE,
                                "json_key": "score", "score_range": [0, 1],
                                "escape_untrusted": False}), encoding="utf-8")
    return path


def _respond(request) -> Reply:
    item = int(re.search(r"\|ITEM=invented fact (\d+) is named\|", request.prompt).group(1))
    return text(json.dumps({"score": VERDICT[item], "reason": "mine"}))


def test_the_users_template_is_sent_byte_for_byte_per_item(typed_config, tmp_path, fake_anthropic):
    fake_anthropic.responder = _respond
    _answers(tmp_path)
    template = _template(tmp_path)
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.protocol=template",
                           f"judge.template={template}"), tmp_path / "out", tmp_path)
    rows = _rows()
    expected = sorted(MINE.format(question=row["question"], gold_answer=item,
                                  predicted_answer=row["cutoff_results"]["top_10"]["generated_answer"])
                      for row in rows for item in row["rubric"])
    assert sorted(r.prompt for r in fake_anthropic.messages_requests()) == expected
    assert len(expected) == 12  # one call per rubric item
    scores = [json.loads(line) for line in (tmp_path / "out" / "scores.jsonl").open()]
    assert [row[p.NUGGET]["score"] for row in scores] == _expected_nugget(rows)
    judge = result.summary["judge"]
    assert judge["protocol"] == "template" and judge["counts"]["calls_made"] == 12

