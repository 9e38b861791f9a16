"""A user's own BEAM template with one text per ability (``by_kind``), against the fake API.

Each rubric item is one judge call; the text sent must be the template's text of the item's
ability, its placeholders filled, byte for byte (issue 26 §1, issue 28: "the judge prompt comes
from the user's own template file"). Invented answers and rubrics, no BEAM excerpt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from beam_helpers import mem0_file, mem0_row
from fake_anthropic import text

from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.judge.protocols.plugged import plugged_kinds

ABILITIES = ("abstention", "summarization", "knowledge_update")


def _rows() -> list[dict]:
    rows = []
    for position, ability in enumerate(ABILITIES):
        row = mem0_row(0, position, ability, [None] * (1 + position),
                       answer=f"Answer <{position}> & more.")
        row["cutoff_results"]["top_10"]["nugget_scores"] = []  # no stored verdicts
        rows.append(row)
    return rows


def _template(tmp_path: Path, *, fallback: bool = False) -> Path:
    by_kind = {
        ability: f"[{ability}] Q={{question}}\nITEM={{gold_answer}}\nA={{predicted_answer}}\n"
                 f"K={{category_name}}"
        for ability in ABILITIES[:2]
    }  # fmt: skip
    body = {"name": "mine", "version": "1", "by_kind": by_kind, "json_key": "score",
            "score_range": [0, 1], "escape_untrusted": False}
    if fallback:
        body["user"] = "[any] {gold_answer} / {predicted_answer}"
    else:
        by_kind[ABILITIES[2]] = "[update] {gold_answer} / {predicted_answer}"
    path = tmp_path / "beam_by_kind.yaml"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def _run(typed_config, tmp_path: Path, server, template: Path):
    mem0_file(tmp_path / "answers.json", _rows())
    cfg = typed_config(
        "data=file", "tracking=none", "benchmark=beam", "scorer=judge",
        f"data.path={tmp_path / 'answers.json'}", f"judge.base_url={server.url}",
        "judge.progress=false", "judge.audit.n=0", "judge.protocol=template",
        f"judge.template={template}", f"judge.cache_path={tmp_path / 'cache.sqlite'}",
    )
    return run_beam(cfg, tmp_path / "out", tmp_path)


def test_each_ability_sends_its_own_template_text_byte_for_byte(
    typed_config, tmp_path, fake_anthropic
):
    fake_anthropic.responder = lambda request: text('{"score": 1}')
    _run(typed_config, tmp_path, fake_anthropic, _template(tmp_path))
    sent = sorted(r.prompt for r in fake_anthropic.messages_requests())
    expected = []
    for row in _rows():
        answer = row["cutoff_results"]["top_10"]["generated_answer"]
        for item in row["rubric"]:
            ability = row["question_type"]
            if ability == "knowledge_update":
                expected.append(f"[update] {item} / {answer}")
            else:
                expected.append(f"[{ability}] Q={row['question']}\nITEM={item}\nA={answer}\n"
                                f"K={ability}")
    assert len(sent) == 1 + 2 + 3  # one call per rubric item
    assert sent == sorted(expected)


def test_an_ability_without_its_text_takes_the_user_fallback(
    typed_config, tmp_path, fake_anthropic
):
    fake_anthropic.responder = lambda request: text('{"score": 0}')
    _run(typed_config, tmp_path, fake_anthropic, _template(tmp_path, fallback=True))
    prompts = [r.prompt for r in fake_anthropic.messages_requests()]
    update = _rows()[2]
    answer = update["cutoff_results"]["top_10"]["generated_answer"]
    assert sorted(p for p in prompts if p.startswith("[any] ")) == sorted(
        f"[any] {item} / {answer}" for item in update["rubric"]
    )
    assert sum(p.startswith("[summarization] ") for p in prompts) == 2


def test_beam_item_prompts_lend_their_kinds_but_are_no_judge_protocol_names(typed_config):
    from locomo_exp.config import ConfigValueError

    with pytest.raises(ConfigValueError) as refused:
        typed_config("judge.protocol=beam-nugget-item")
    assert str(refused.value) == (
        "judge.protocol: unknown judge protocol 'beam-nugget-item'. "
        "Available: binary, locomo_plus, longmemeval, rubric, template"
    )
    with pytest.raises(ValueError, match="unknown judge protocol 'beam-nugget-item'"):
        get_protocol("beam-nugget-item")
    assert set(ABILITIES) <= set(plugged_kinds())  # by_kind may name every BEAM ability
