"""A sweep whose every job would stop on its input is refused before it writes anything.

The trial: ``-m data=file data.path=badcat.json,empty.json`` ran both jobs, both failed on
their input, and the sweep left ``mlflow.db``, ``mlartifacts/`` and ``outputs/multirun/...``
behind (a single failed run leaves nothing). Now the inputs are read before the sweep
starts; when none can be scored the sweep stops with one line per job and exit status 2.
One valid input lets the sweep start: a job with an invalid one fails alone, as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE, Composer, run_cli

from locomo_exp import sweep
from locomo_exp.sweep import plan

BAD_CATEGORY = [
    {"question": "Which instrument?", "ground_truth": "the cello", "predicted_answer": "cello",
     "category": 4},
    {"question": "When?", "ground_truth": "7 April 2024", "predicted_answer": "April 7",
     "category": 9},
]


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    bad = tmp_path / "badcat.json"
    bad.write_text(json.dumps(BAD_CATEGORY))
    empty = tmp_path / "empty.json"
    empty.write_text("[]\n")
    return bad, empty


def test_every_input_invalid_lists_each_job_and_one_valid_input_lets_it_start(
    typed_config: Composer, tmp_path: Path
) -> None:
    bad, empty = _inputs(tmp_path)
    jobs = [(f"job {n} (data.path={p.name})", typed_config("data=file", f"data.path={p}"))
            for n, p in enumerate([bad, empty, bad])]
    assert plan.every_input_invalid(jobs, tmp_path) == [
        f"job 0 (data.path=badcat.json): {bad}: record [1]: field 'category': unknown category 9 "
        "(LoCoMo categories are 1-5). Fix the file, or set data.on_invalid=skip to score the "
        "valid records.",
        f"job 1 (data.path=empty.json): {empty}: contains no records",
        f"job 2 (data.path=badcat.json): {bad}: record [1]: field 'category': unknown category 9 "
        "(LoCoMo categories are 1-5). Fix the file, or set data.on_invalid=skip to score the "
        "valid records.",
    ]
    good = ("job 3 (example)", typed_config("data=file", f"data.path={EXAMPLE}"))
    assert plan.every_input_invalid([*jobs, good], tmp_path) == []
    assert plan.every_input_invalid([], tmp_path) == []


def test_inputs_are_read_until_one_is_valid_each_distinct_setting_once(
    typed_config: Composer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad, _ = _inputs(tmp_path)
    import locomo_exp.data as data

    read: list[str] = []
    real = data.load_data

    def counting(cfg, *args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(str(cfg.path))
        return real(cfg, *args, **kwargs)

    monkeypatch.setattr(data, "load_data", counting)
    jobs = [("a", typed_config("data=file", f"data.path={bad}")),
            ("b", typed_config("data=file", f"data.path={bad}", "judge.temperature=0.5")),
            ("c", typed_config("data=file", f"data.path={EXAMPLE}")),
            ("d", typed_config("data=file", f"data.path={bad}", "f1=squad"))]
    assert plan.every_input_invalid(jobs, tmp_path) == []
    assert read == [str(bad), str(EXAMPLE)]


@pytest.mark.slow
def test_a_sweep_of_only_bad_inputs_leaves_nothing(tmp_path: Path) -> None:
    _inputs(tmp_path)
    proc = run_cli("-m", "data=file", "data.path=badcat.json,empty.json", cwd=tmp_path)
    assert proc.returncode == sweep.EXIT_INVALID_SWEEP
    assert proc.stderr.startswith(
        "error: the sweep was not started (2 jobs planned; no job ran and no API call was made): "
        "2 problems:\n  - job 0 (data.path=badcat.json): "
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["badcat.json", "empty.json"]
