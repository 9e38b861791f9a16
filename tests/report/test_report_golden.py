"""Golden tests of ``report.md``: fixed small inputs rendered end to end vs checked-in files.

A change to the report shows as a unified diff. After an intended change, regenerate with

    LOCOMO_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/report/test_report_golden.py

and review ``git diff tests/golden/``. Volatile text is masked before comparing: the project
path (the input's absolute path) becomes ``<project>``. The sha256 of the input is its content
hash, so it stays.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path

import pytest
from conftest import CONF_DIR, PROJECT_ROOT
from hydra import compose, initialize_config_dir

from locomo_exp.config import register_configs, to_experiment_config
from locomo_exp.experiment import run_experiment

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
UPDATE_ENV = "LOCOMO_UPDATE_GOLDEN"
"""Set to 1 to rewrite the golden files instead of comparing."""


_CARD_VOLATILE = re.compile(r"^- (Tool|Command|Date): .*$", re.MULTILINE)


def mask_volatile(text: str) -> str:
    """Replace the project path with ``<project>`` and the card's tool/command/date lines."""
    text = _CARD_VOLATILE.sub(lambda m: f"- {m.group(1)}: <masked>", text)
    return text.replace(str(PROJECT_ROOT), "<project>")


def compare_with_golden(actual: str, name: str) -> None:
    """Assert ``actual`` equals ``tests/golden/<name>``, failing with a unified diff.

    With ``LOCOMO_UPDATE_GOLDEN=1`` the golden file is (re)written and the test passes.
    """
    path = GOLDEN_DIR / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.write_text(actual, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"{path} is missing: run with {UPDATE_ENV}=1 to create it")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                fromfile=f"golden/{name}",
                tofile="rendered",
            )
        )
        pytest.fail(
            f"report differs from tests/golden/{name} (regenerate with {UPDATE_ENV}=1 if "
            f"intended):\n{diff}",
            pytrace=False,
        )


def _render(tmp_path: Path, *overrides: str) -> str:
    register_configs()
    with initialize_config_dir(
        version_base="1.3", config_dir=str(CONF_DIR)
    ):
        cfg = to_experiment_config(
            compose(config_name="config", overrides=["tracking=none", *overrides])
        )
    result = run_experiment(cfg, tmp_path / "out", tmp_path)
    return mask_volatile(result.report_path.read_text(encoding="utf-8"))


def test_f1_only_report_of_the_example_matches_golden(tmp_path: Path) -> None:
    compare_with_golden(_render(tmp_path, "data=example"), "report_f1_example.md")


def test_report_with_stored_judge_verdicts_matches_golden(tmp_path: Path) -> None:
    # Mem0-harness layout with llm_score verdicts, one null response (scored 0), no category 5
    report = _render(tmp_path, f"data.path={PROJECT_ROOT / 'tests' / 'golden' / 'stored_j_input.json'}")
    assert "## Judge verdicts stored in the input" in report
    compare_with_golden(report, "report_stored_j.md")


def test_golden_mask_hides_the_project_path() -> None:
    text = f"- Input: `{PROJECT_ROOT}/locomo_exp/example/qa_results.json` (format `qa_results`)"
    assert (
        mask_volatile(text)
        == "- Input: `<project>/locomo_exp/example/qa_results.json` (format `qa_results`)"
    )


def test_golden_mismatch_fails_with_a_unified_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "GOLDEN_DIR", tmp_path)
    monkeypatch.delenv(UPDATE_ENV, raising=False)
    (tmp_path / "x.md").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception) as info:
        compare_with_golden("a\nc\n", "x.md")
    assert "--- golden/x.md\n+++ rendered\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n" in str(info.value)
