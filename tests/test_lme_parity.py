"""A LongMemEval run obeys what a LoCoMo run obeys (issue 26): the spend cap before any
removal, the audit's share of the calls, and several runs of a yes/no judge (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from lme_helpers import dataset_item, write_json, write_jsonl

TYPES = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")


def _files(tmp_path: Path, n: int = 8) -> tuple[Path, Path]:
    """``n`` questions over four types, with stored verdicts (right for even ids)."""
    items = [dataset_item(f"q{i}", TYPES[i % 4], answer=f"answer {i}") for i in range(n)]
    ref = write_json(tmp_path / "ref.json", items)
    hyp = write_jsonl(tmp_path / "h.jsonl", [
        {"question_id": f"q{i}", "hypothesis": "good" if i % 2 == 0 else "bad",
         "autoeval_label": {"model": "gpt-4o", "label": i % 2 == 0}}
        for i in range(n)
    ])
    return ref, hyp


def _snapshot(run_dir: Path) -> dict[str, tuple[bytes, int]]:
    """The run's own files (not Hydra's ``.hydra/``): content and modification time (ns)."""
    return {
        str(p.relative_to(run_dir)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and ".hydra" not in p.parts
    }


@pytest.mark.slow
def test_the_spend_cap_refuses_before_an_overwritten_run_is_removed(tmp_path, fake_anthropic):
    ref, hyp = _files(tmp_path)
    data = ("data=file", "tracking=none", f"data.path={hyp}", f"data.reference={ref}",
            "hydra.run.dir=out")
    first = run_cli(*data, cwd=tmp_path)  # a finished run of the stored verdicts
    assert first.returncode == 0, first.stderr
    before = _snapshot(tmp_path / "out")
    assert {"summary.json", "report.md", "scores.jsonl", "card.json"} <= set(before)
    done = run_cli(
        *data, "benchmark=longmemeval", "scorer=judge", "overwrite=true",
        "judge.max_cost_usd=0.000001", "judge.progress=false", cwd=tmp_path, server=fake_anthropic,
    )
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()  # one line, naming the cap; nothing logged before it
    assert line.startswith("error: judge.max_cost_usd=1e-06: the 8 calls to make are estimated at $")
    assert "above the cap; no call was made" in line
    assert _snapshot(tmp_path / "out") == before  # the old run is untouched
    assert fake_anthropic.messages_requests() == []
