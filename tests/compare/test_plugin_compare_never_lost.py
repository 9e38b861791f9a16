"""A benchmark plug-in's comparison is built beside an earlier one (issue 27 §3: compares)."""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import pytest

from locomo_exp.benchmarks.plugin import PluginRun
from locomo_exp.compare.job import run_plugin_compare


class _Plugin:
    """Writes compare.md and compare.json, then fails as told."""

    def __init__(self, fail: BaseException | None) -> None:
        self.fail = fail

    def compare(self, cfg: object, output_dir: Path, start_dir: Path) -> PluginRun:
        output_dir.mkdir(parents=True, exist_ok=True)
        (output_dir / "compare.md").write_text("new md\n")
        if self.fail is not None:
            raise self.fail
        (output_dir / "compare.json").write_text('{"new": true}\n')
        return PluginRun(console=f"Comparison: {output_dir / 'compare.md'}", output_dir=output_dir)


def _earlier(tmp_path: Path) -> Path:
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "compare.md").write_text("old md\n")
    (out / "compare.json").write_text('{"old": true}\n')
    return out


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.parametrize("stop", [
    pytest.param(OSError(errno.ENOSPC, "No space left on device"), id="full-disk"),
    pytest.param(KeyboardInterrupt(), id="ctrl-c"),
    pytest.param(ValueError("refused"), id="refused"),
])
def test_a_stopped_plugin_comparison_leaves_the_earlier_one(tmp_path, caplog, stop) -> None:
    out = _earlier(tmp_path)
    before = _files(out)
    with caplog.at_level(logging.INFO), pytest.raises(type(stop)):
        run_plugin_compare(_Plugin(stop), object(), out, tmp_path)
    assert _files(out) == before  # byte for byte, no stage left
    kept = [r.getMessage() for r in caplog.records if "kept as it was" in r.getMessage()]
    assert len(kept) == 1 and "comparison" in kept[0]


def test_a_finished_plugin_comparison_replaces_the_earlier_one(tmp_path) -> None:
    out = _earlier(tmp_path)
    console, status = run_plugin_compare(_Plugin(None), object(), out, tmp_path)
    assert (status, console) == (0, f"Comparison: {out / 'compare.md'}")
    assert _files(out) == {"compare.md": b"new md\n", "compare.json": b'{"new": true}\n'}


def test_a_first_plugin_comparison_is_written_in_place(tmp_path) -> None:
    out = tmp_path / "cmp"
    console, status = run_plugin_compare(_Plugin(None), object(), out, tmp_path)
    assert (status, console) == (0, f"Comparison: {out / 'compare.md'}")
    assert sorted(_files(out)) == ["compare.json", "compare.md"]
