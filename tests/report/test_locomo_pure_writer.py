"""LoCoMo's writers are pure functions of the run built once (issue 26 §3).

:func:`build_locomo_run` computes the rows, the statistics, the summary and the card;
:func:`write_locomo_run` only renders and writes: it calls no statistic and writing the same
run twice gives the same files. ``questions.html``'s audit rows and MLflow's card params come
from the built run, not from reading back ``summary.json`` or ``card.json``.
"""

from __future__ import annotations

import inspect
import json
import pathlib
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Composer
from fake_anthropic import accept_all

from locomo_exp.data import load_data
from locomo_exp.report.locomo_run import LocomoRun, build_locomo_run
from locomo_exp.report.outputs import write_locomo_run
from locomo_exp.scoring import score_lexical

STATISTICS_MODULES = ("locomo_exp.stats.", "locomo_exp.scoring.summary")
"""Where the statistics live: every function of these modules is forbidden to the writer."""


def _statistics_functions() -> set[Any]:
    import locomo_exp.scoring.summary  # noqa: F401 - loaded so its functions are collected
    import locomo_exp.stats.agreement  # noqa: F401
    import locomo_exp.stats.bootstrap  # noqa: F401
    import locomo_exp.stats.correction  # noqa: F401

    found = set()
    for name, module in list(sys.modules.items()):
        if module is not None and name.startswith(STATISTICS_MODULES):
            found |= {value for _, value in inspect.getmembers(module, inspect.isfunction)
                      if value.__module__ == name}
    return found


def _forbid_statistics(monkeypatch: pytest.MonkeyPatch) -> int:
    """Replace every statistics function, wherever a locomo_exp module holds it, by a raise."""
    targets = _statistics_functions()

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the writer computed a statistic")

    replaced = 0
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("locomo_exp"):
            continue
        for attribute, value in list(vars(module).items()):
            if inspect.isfunction(value) and value in targets:
                monkeypatch.setattr(module, attribute, refuse)
                replaced += 1
    return replaced


def _forbid_reading(monkeypatch: pytest.MonkeyPatch, directory: Path) -> list[str]:
    """Fail any ``Path.read_text``/``read_bytes`` of a file in ``directory``; returns the names."""
    tried: list[str] = []
    real_text, real_bytes = pathlib.Path.read_text, pathlib.Path.read_bytes

    def guard(path: Path) -> None:
        if Path(path).resolve().parent == directory.resolve():
            tried.append(Path(path).name)
            raise AssertionError(f"an output file was read back: {path}")

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        guard(self)
        return real_text(self, *args, **kwargs)

    def read_bytes(self: Path) -> bytes:
        guard(self)
        return real_bytes(self)

    monkeypatch.setattr(pathlib.Path, "read_text", read_text)
    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    return tried


def _built(typed_config: Composer, *overrides: str) -> LocomoRun:
    cfg = typed_config("tracking.enabled=false", *overrides)
    loaded = load_data(cfg.data, Path.cwd(), cfg.category_names)
    lexical = score_lexical(loaded.records, cfg.f1.variant.value, cfg.f1.bleu1)
    return build_locomo_run(cfg, loaded, lexical, status={"f1": "ok"})


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def test_writing_a_built_run_computes_nothing_and_twice_gives_the_same_files(
    typed_config: Composer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _built(typed_config, "data=example")
    assert run.summary.analysis is not None and run.summary.analysis.bootstrap["f1"]  # built
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    written = write_locomo_run(run, first)  # matplotlib imported and warm before the traps

    assert _forbid_statistics(monkeypatch) >= 10  # analyse, build_summary, bootstrap_ci, ...
    tried = _forbid_reading(monkeypatch, first) + _forbid_reading(monkeypatch, second)
    again = write_locomo_run(run, first)
    other = write_locomo_run(run, second)
    monkeypatch.undo()

    assert tried == []
    assert [p.name for p in written] == [p.name for p in again] == [p.name for p in other] == [
        "report.md", "scores.jsonl", "summary.json", "config.yaml", "card.json", "report.html",
        "category_scores.png"]
    assert _files(first) == _files(second)
    assert json.loads((first / "summary.json").read_text()) == run.summary_json
    assert json.loads((first / "card.json").read_text()) == run.card
    html = (first / "report.html").read_text()
    assert "data:image/png;base64," in html  # the plot's bytes inline, not read back


def test_a_record_without_plots_removes_an_earlier_attempts_plot(
    typed_config: Composer, tmp_path: Path
) -> None:
    run = _built(typed_config, "data=example")
    write_locomo_run(run, tmp_path)
    assert (tmp_path / "category_scores.png").is_file()
    from dataclasses import replace

    files = write_locomo_run(replace(run, plots=False), tmp_path)
    assert not (tmp_path / "category_scores.png").exists()
    assert [p.name for p in files][-1] == "report.html"


def test_questions_audit_rows_and_card_params_come_from_the_built_run(
    fake_anthropic: Any, run_judged: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judged run with an audit: ``questions.html`` lists the controls and MLflow logs the
    card's params while no ``summary.json``/``card.json`` of the run may be read."""
    fake_anthropic.responder = accept_all()
    out = tmp_path / "out"
    out.mkdir()
    tried = _forbid_reading(monkeypatch, out)
    result = run_judged("scorer=judge", "data=example", "judge.runs=1",
                        "judge.min_successful_runs=1", "judge.audit.n=2",
                        "judge.audit.max_share=null", "tracking.enabled=true")
    monkeypatch.undo()

    assert tried == []
    summary = json.loads((out / "summary.json").read_text())
    controls = list(summary["judge"]["trust"]["audit"]["verdicts"])
    assert len(controls) >= 4  # 2 per kind with eligible records
    page = (out / "questions.html").read_text(encoding="utf-8")
    found = re.search(r"<script id='rows' type='application/json'>(.*?)</script>", page, re.S)
    assert found is not None
    rows = json.loads(found.group(1).replace("<\\/", "</"))["rows"]
    assert [row[0] for row in rows] == [f"ex-1-q{i:02d}" for i in range(1, 21)] + controls
    from mlflow import MlflowClient

    params = MlflowClient().get_run(result.run_id).data.params
    card = json.loads((out / "card.json").read_text())
    assert params["data.sha256"] == card["input"]["sha256"] == summary["input"]["sha256"]
    assert params["judge.prompt_version"] == card["judge"]["prompt_version"] == "rubric-v1"
