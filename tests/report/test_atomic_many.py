"""Several outputs written atomically at once (``locomo_exp/report/atomic_many.py``): the
writes run together, the files appear in the given order, a failure leaves the files before
it in place and no temporary behind, as one atomic write after another would."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import TextIO

import pytest

from locomo_exp.report import atomic_many
from locomo_exp.report.atomic_many import atomic_write_files
from locomo_exp.report.run_dir import atomic_write_text

NAMES = ("scores.jsonl", "report.md", "summary.json", "card.json", "config.yaml")


def _text(name: str) -> str:
    return f"{name}: é\n" * 3


def _writer(name: str):  # type: ignore[no-untyped-def]
    return lambda handle: handle.write(_text(name))


def _failing(message: str):  # type: ignore[no-untyped-def]
    def write(handle: TextIO) -> None:
        handle.write("partial")
        raise OSError(28, message)

    return write


def test_every_file_written_whole_with_the_usual_mode(tmp_path: Path) -> None:
    paths = atomic_write_files([(tmp_path / n, _writer(n)) for n in NAMES])
    assert paths == [tmp_path / n for n in NAMES]
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == {
        n: _text(n) for n in NAMES}
    one_by_one = atomic_write_text(tmp_path / "other.md", "x")
    assert stat.S_IMODE(os.stat(paths[0]).st_mode) == stat.S_IMODE(os.stat(one_by_one).st_mode)


def test_the_writes_run_at_once(tmp_path: Path) -> None:
    together = threading.Barrier(len(NAMES), timeout=30)  # passes only if all five wait at once

    def meet(name: str):  # type: ignore[no-untyped-def]
        def write(handle: TextIO) -> None:
            together.wait()
            handle.write(_text(name))

        return write

    atomic_write_files([(tmp_path / n, meet(n)) for n in NAMES])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(NAMES)


def test_the_files_are_moved_into_place_in_the_given_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved: list[str] = []
    real = os.replace

    def recorded(src: Path, dst: Path) -> None:
        moved.append(Path(dst).name)
        real(src, dst)

    monkeypatch.setattr(atomic_many.os, "replace", recorded)
    atomic_write_files([(tmp_path / n, _writer(n)) for n in NAMES])
    assert moved == list(NAMES)


def test_a_failure_keeps_the_files_before_it_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text("old run", encoding="utf-8")
    writers = [(tmp_path / n, _writer(n)) for n in NAMES]
    writers[2] = (tmp_path / "summary.json", _failing("disk full at summary"))
    writers[4] = (tmp_path / "config.yaml", _failing("disk full at config"))
    with pytest.raises(OSError, match="disk full at summary"):  # the first in the files' order
        atomic_write_files(writers)
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == {
        "scores.jsonl": _text("scores.jsonl"), "report.md": _text("report.md"),
        "summary.json": "old run"}  # card.json was written, but never moved in after it


def test_no_file_is_an_empty_list(tmp_path: Path) -> None:
    assert atomic_write_files([]) == []
    assert list(tmp_path.iterdir()) == []
