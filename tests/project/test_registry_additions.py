"""The "Adding things" recipes of docs/development.md, followed on a copy of the package.

A dummy F1 variant (2 Python files + 1 YAML), a dummy judge protocol (1 module + its line
in the registry) and a dummy file layout (1 module + its line in the registry) are added
to a copy of ``locomo_exp`` exactly as the recipes say, and the copy is run as a user
would (``python -m locomo_exp``): each entry must reach ``scores.jsonl``,
``summary.json``, ``card.json``, ``report.md``, the MLflow names and ``mode=compare``.
The files each addition touched are measured against the original package.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT
from fake_anthropic import FAKE_API_KEY, FakeAnthropicServer, accept_all

pytestmark = pytest.mark.slow

EXAMPLE = PROJECT_ROOT / "locomo_exp" / "example" / "qa_results.json"

DUMMY_F1 = '''

def dummy_f1(predicted: str, ground_truth: str, category: int) -> float:
    """1.0 when the first words of prediction and gold match (case ignored), else 0.0."""
    p, g = predicted.lower().split(), ground_truth.lower().split()
    return float(bool(p) and bool(g) and p[0] == g[0])
'''

DUMMY_SPEC = """    MetricSpec(
        name="dummy",
        kind="f1",
        function=dummy_f1,
        version="dummy-f1/v1",
        title="F1, dummy first word",
        short_title="F1 (dummy)",
        source="tests/project/test_registry_additions.py",
    ),
"""

DUMMY_PROTOCOL = '''"""A test protocol: the binary protocol's format under another name and threshold."""

from dataclasses import replace

from locomo_exp.judge.protocols.binary import BINARY

DUMMY = replace(BINARY, name="dummy", prompt_version="dummy-v1", accept_threshold=60.0)
'''

DUMMY_LAYOUT = '''"""A test layout: a JSON list of {q, gold, pred, cat, conv}."""

from locomo_exp.config import FieldMap
from locomo_exp.data.layout_spec import Candidate, Layout, LayoutSpec

FIELDS = FieldMap(
    question="q", ground_truth="gold", prediction="pred", category="cat", conversation_id="conv"
)


def _build(candidate: Candidate) -> Layout:
    return Layout("dummy", candidate.records, candidate.records_key, FIELDS)


LAYOUT = LayoutSpec(
    name="dummy",
    scope="records",
    looks_for="a dummy list with 'pred'",
    matches=lambda candidate: any("pred" in r and "q" in r for r in candidate.sample),
    build=_build,
)
'''


def _insert_after(path: Path, anchor: str, text: str) -> None:
    """Insert ``text`` after the one occurrence of ``anchor`` in ``path``."""
    source = path.read_text(encoding="utf-8")
    assert source.count(anchor) == 1, f"{path}: anchor {anchor!r} not found exactly once"
    path.write_text(source.replace(anchor, anchor + text), encoding="utf-8")


def _changed(original: Path, copy: Path) -> set[str]:
    """Files added or modified in ``copy`` relative to ``original`` (``__pycache__`` ignored)."""
    changed: set[str] = set()

    def walk(cmp: filecmp.dircmp[str], prefix: str) -> None:
        changed.update(prefix + n for n in cmp.right_only if n != "__pycache__")
        changed.update(prefix + n for n in cmp.diff_files)
        for name, sub in cmp.subdirs.items():
            if name != "__pycache__":
                walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(original, copy, ignore=["__pycache__"]), "")
    return changed


def _add_f1_variant(package: Path) -> None:
    f1 = package / "scoring" / "f1.py"
    f1.write_text(f1.read_text(encoding="utf-8") + DUMMY_F1, encoding="utf-8")
    specs = package / "scoring" / "specs.py"
    _insert_after(
        specs,
        "from __future__ import annotations\n",
        "\nfrom locomo_exp.scoring.f1 import dummy_f1\n",
    )
    _insert_after(specs, "LEXICAL_SPECS: tuple[MetricSpec, ...] = (\n", DUMMY_SPEC)
    (package / "conf" / "f1" / "dummy.yaml").write_text("variant: dummy\nbleu1: true\n")


def _add_protocol(package: Path) -> None:
    (package / "judge" / "protocols" / "dummy.py").write_text(DUMMY_PROTOCOL)
    registry = package / "judge" / "protocols" / "__init__.py"
    _insert_after(
        registry,
        "from __future__ import annotations\n",
        "\nfrom locomo_exp.judge.protocols.dummy import DUMMY\n",
    )
    _insert_after(registry, "    for spec in (\n", "        DUMMY,\n")


def _add_layout(package: Path) -> None:
    (package / "data" / "dummy_layout.py").write_text(DUMMY_LAYOUT)
    registry = package / "data" / "layouts.py"
    _insert_after(
        registry,
        "from __future__ import annotations\n",
        "\nfrom locomo_exp.data import dummy_layout\n",
    )
    _insert_after(registry, "LAYOUTS: tuple[LayoutSpec, ...] = (\n", "    dummy_layout.LAYOUT,\n")


def _cli(root: Path, args: list[str], server: FakeAnthropicServer) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "ANTHROPIC_"))}
    env.update(PYTHONPATH=str(root), ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=FAKE_API_KEY)
    proc = subprocess.run(
        [sys.executable, "-m", "locomo_exp", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_dummy_f1_variant_protocol_and_layout_reach_every_output(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer
) -> None:
    original = PROJECT_ROOT / "locomo_exp"
    root = tmp_path / "src"
    package = root / "locomo_exp"
    shutil.copytree(original, package, ignore=shutil.ignore_patterns("__pycache__"))

    touched: dict[str, set[str]] = {}
    for kind, add in (
        ("f1", _add_f1_variant),
        ("protocol", _add_protocol),
        ("layout", _add_layout),
    ):
        before = _changed(original, package)
        add(package)
        touched[kind] = _changed(original, package) - before
    assert touched == {
        "f1": {"scoring/f1.py", "scoring/specs.py", "conf/f1/dummy.yaml"},
        "protocol": {"judge/protocols/dummy.py", "judge/protocols/__init__.py"},
        "layout": {"data/dummy_layout.py", "data/layouts.py"},
    }

    rows = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    dummy_file = tmp_path / "dummy_answers.json"
    dummy_file.write_text(
        json.dumps(
            [
                {
                    "q": r["question"],
                    "gold": r["ground_truth"],
                    "pred": r["predicted_answer"],
                    "cat": r["category"],
                    "conv": r["conversation_id"],
                }
                for r in rows
            ]
        )
    )
    fake_anthropic.responder = accept_all("binary")
    db = tmp_path / "mlflow.db"
    common = [f"tracking.uri=sqlite:///{db}"]
    f1_run, judged_run, compared = tmp_path / "f1_run", tmp_path / "judged", tmp_path / "cmp"
    _cli(root, ["f1=dummy", f"hydra.run.dir={f1_run}", *common], fake_anthropic)
    _cli(
        root,
        [
            "data=file",
            f"data.path={dummy_file}",
            "scorer=both",
            "judge.protocol=dummy",
            "judge.runs=1",
            "judge.min_successful_runs=1",
            "judge.progress=false",
            f"judge.cache_path={tmp_path}/cache.sqlite",
            f"hydra.run.dir={judged_run}",
            *common,
        ],
        fake_anthropic,
    )
    _cli(
        root,
        [
            "mode=compare",
            f"compare.runs=[{f1_run},{judged_run}]",
            "compare.allow_mismatch=true",
            f"hydra.run.dir={compared}",
            *common,
        ],
        fake_anthropic,
    )

    # the F1 variant: scores.jsonl, summary.json (value and version), card, report, compare
    scores = [json.loads(line) for line in (f1_run / "scores.jsonl").read_text().splitlines()]
    assert all("f1_dummy" in row for row in scores)
    summary = json.loads((f1_run / "summary.json").read_text())
    assert "f1_dummy" in summary["metrics"] and summary["versions"]["f1_dummy"] == "dummy-f1/v1"
    card = json.loads((f1_run / "card.json").read_text())
    assert card["f1"] == {"variant": "dummy", "version": "dummy-f1/v1"}
    assert "| F1, dummy first word |" in (f1_run / "report.md").read_text()
    compare = json.loads((compared / "compare.json").read_text())
    dummy_rows = [r for r in compare["rows"] if r["metric"] == "f1_dummy"]
    assert dummy_rows and all(any("f1.variant" in m for m in r["marks"]) for r in dummy_rows)
    assert "| F1 (dummy) |" in (compared / "compare.md").read_text()

    # the protocol and the layout: summary.json, card, report
    judged = json.loads((judged_run / "summary.json").read_text())
    assert judged["input"]["format"] == "dummy"
    assert (
        judged["judge"]["protocol"] == "dummy" and judged["judge"]["prompt_version"] == "dummy-v1"
    )
    card = json.loads((judged_run / "card.json").read_text())
    assert card["input"]["format"] == "dummy" and card["judge"]["protocol"] == "dummy"
    report = (judged_run / "report.md").read_text()
    assert "format `dummy`" in report or "format dummy)" in report
    assert "protocol `dummy`" in report or "protocol dummy," in report

    # MLflow: the headline metrics and the params that define the measurement; every metric
    # (f1_dummy per group included) in each run's metrics.json artifact
    with sqlite3.connect(db) as con:
        metrics = {k for (k,) in con.execute("select key from metrics")}
        params = set(con.execute("select key, value from params").fetchall())
        artifact_dirs = [u for (u,) in con.execute("select artifact_uri from runs")]
    assert {"f1/overall", "j/overall"} <= metrics
    assert {("f1.variant", "dummy"), ("judge.protocol", "dummy")} <= params, sorted(params)
    assert any(v == "dummy" and "format" in k for k, v in params), sorted(params)
    logged = [
        json.loads(p.read_text())
        for uri in artifact_dirs
        for p in Path(uri.removeprefix("file://")).rglob("metrics.json")
    ]
    assert logged, artifact_dirs
    assert any("f1_dummy/overall" in m for m in logged)
    assert any(k.startswith("compare/") and "/f1_dummy/" in k for m in logged for k in m) or any(
        k.startswith("compare/") and "/f1_dummy/" in k for k in metrics
    )
