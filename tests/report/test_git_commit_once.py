"""``git_commit`` asks git once per directory and process (``locomo_exp/report/provenance.py``):
every job of a process records the answer of the first, with one ``git`` child in all."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from locomo_exp.report import provenance


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = subprocess.run

    def counted(args: Any, **kwargs: Any) -> Any:
        if list(args) == ["git", "rev-parse", "HEAD"]:  # git_commit's question
            calls.append(str(kwargs.get("cwd")))
        return real(args, **kwargs)

    monkeypatch.setattr(provenance.subprocess, "run", counted)
    provenance._head_commit.cache_clear()
    yield calls
    provenance._head_commit.cache_clear()


def _commit_repo(path: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=path, check=True,
            capture_output=True, text=True,
        ).stdout.strip()

    git("init", "-q")
    (path / "a.txt").write_text("a", encoding="utf-8")
    git("add", "a.txt")
    git("commit", "-q", "-m", "one")
    return git("log", "-1", "--format=%H")


def test_one_git_child_per_directory_and_process(git_calls: list[str], tmp_path: Path) -> None:
    head = _commit_repo(tmp_path)
    assert len(head) == 40
    assert [provenance.git_commit(tmp_path) for _ in range(3)] == [head, head, head]
    assert git_calls == [str(tmp_path)]
    outside = tmp_path.parent / f"{tmp_path.name}_plain"
    outside.mkdir()
    if subprocess.run(["git", "log", "-1"], cwd=outside, capture_output=True,
                      check=False).returncode == 0:
        pytest.skip("the temporary directory is inside a git work tree")
    assert provenance.git_commit(outside) is None
    assert provenance.git_commit(outside) is None  # not a checkout: also asked once
    assert git_calls == [str(tmp_path), str(outside)]


def test_a_card_of_every_job_names_the_commit_of_the_first(
    git_calls: list[str], tmp_path: Path
) -> None:
    head = _commit_repo(tmp_path)
    cards = [provenance.provenance(argv=["x"], package_dir=tmp_path) for _ in range(2)]
    assert [c["tool"]["git_commit"] for c in cards] == [head, head]
    assert len(git_calls) == 1
