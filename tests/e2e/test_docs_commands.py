"""Every ```bash block of README.md and docs/*.md runs, so the documentation cannot drift.

Each block runs with ``bash -eo pipefail`` in its own temporary directory against the installed
package: ``.venv/bin/python`` (and a bare ``python -m``) becomes this interpreter,
``../shared/data`` the real shared data folder (the block is skipped when it is absent), and a
``locomo_exp`` command that does not mention tracking gets ``tracking=none`` (MLflow blocks that
name a tracking setting log into the temporary directory). No API key is passed and the judge's
base URL points at a closed local port, so a block that would call an API fails instead of
spending. A block preceded by ``<!-- no-test: reason -->`` is not run; the list stays short.
A block that names a path of its own (a fixed ``hydra.run.dir`` or ``hydra.sweep.dir``, a file
written with ``>``) runs twice in a row in the same directory, and both runs must succeed: a
reader runs a recipe again, and the second run meets the files the first one left (issue 27
§5: the offline recipe read the previous run's URL file). The other blocks write a new
timestamped run directory each time, so a second run would only repeat the first. The selected
blocks run concurrently (one process per CPU) in one module fixture.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NO_TEST = re.compile(r"^<!--\s*no-test\b:?\s*(?P<reason>.*?)\s*-->$")
MAX_NO_TEST = 14  # blocks that cannot run here (API keys, SLURM, the suite itself); keep it small


@dataclass(frozen=True)
class Block:
    """One ```bash block: where it is, its text, and why it is not run (if it is not)."""

    page: str
    line: int
    text: str
    no_test: str | None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def read_blocks(path: Path) -> list[Block]:
    """The ```bash blocks of one markdown page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(ROOT).as_posix()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            start = i
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            assert i < len(lines), f"{page}:{start + 1}: unclosed ```bash block"
            before = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
            marker = NO_TEST.match(before)
            blocks.append(
                Block(page, start + 1, "\n".join(body) + "\n", marker["reason"] if marker else None)
            )
        i += 1
    return blocks


ALL_BLOCKS = [block for page in PAGES for block in read_blocks(page)]
RUN_BLOCKS = [block for block in ALL_BLOCKS if block.no_test is None]


def _comment_start(line: str) -> int:
    """Index of a shell comment's ``#`` outside quotes, or ``len(line)``."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return index
    return len(line)


def prepare(text: str) -> str:
    """The block's text as this test runs it (interpreter, data path, tracking off).

    A script of the checkout's ``tests/`` (``python tests/fake_anthropic.py``) runs from the
    checkout, as it does in the project root, while the block runs in its own directory.
    """
    python = shlex.quote(sys.executable)
    text = text.replace(".venv/bin/python", python)
    text = re.sub(r"(?<![\w/.-])python3? -m ", f"{python} -m ", text)
    text = re.sub(r"(?<![\w/.-])python3? (?=tests/)", f"{python} ", text)
    text = text.replace(f"{python} tests/", f"{python} {shlex.quote(str(ROOT))}/tests/")
    text = text.replace("../shared/data", str(SHARED_DATA))
    lines: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        if "-m locomo_exp" in line and "tracking" not in line and "--help" not in line:
            cut = _comment_start(line)
            line = f"{line[:cut].rstrip()} tracking=none {line[cut:]}".rstrip()
        lines.append(line)
    return "\n".join(lines) + "\n"


def _env(home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "OPENAI_", "MLFLOW_", "HYDRA_"))
    }
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # discard port: nothing answers
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{home / 'mlflow.db'}"
    return env


OWN_PATH = re.compile(r"hydra\.(run|sweep)\.dir=|>")


def runs_of(block: Block) -> int:
    """How many times in a row the block runs: 2 when it names a path of its own, else 1."""
    return 2 if OWN_PATH.search(block.text) else 1


def _run(block: Block, workdir: Path) -> list[subprocess.CompletedProcess[str]]:
    """Run the block :func:`runs_of` times in ``workdir``, stopping after the first failure."""
    workdir.mkdir(parents=True)
    done: list[subprocess.CompletedProcess[str]] = []
    for _ in range(runs_of(block)):
        done.append(
            subprocess.run(
                ["bash", "-eo", "pipefail", "-c", prepare(block.text)],
                cwd=workdir,
                env=_env(workdir),
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        )
        if done[-1].returncode != 0:
            break
    return done


@pytest.fixture(scope="module")
def results(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[subprocess.CompletedProcess[str]]]:
    """Run every selected, runnable block concurrently; results keyed by block id."""
    selected = {
        item.callspec.params["block"].id
        for item in request.session.items
        if item.path == Path(__file__) and hasattr(item, "callspec") and "block" in item.callspec.params
    }
    todo = [
        block
        for block in RUN_BLOCKS
        if block.id in selected and ("../shared/data" not in block.text or SHARED_DATA.is_dir())
    ]
    base = tmp_path_factory.mktemp("docs_commands")
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {
            block.id: pool.submit(_run, block, base / f"block{number}")
            for number, block in enumerate(todo)
        }
        return {key: future.result() for key, future in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("block", RUN_BLOCKS, ids=[block.id for block in RUN_BLOCKS])
def test_doc_block_runs(
    block: Block, results: dict[str, list[subprocess.CompletedProcess[str]]]
) -> None:
    if "../shared/data" in block.text and not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent")
    runs = results[block.id]
    for number, done in enumerate(runs, start=1):
        assert done.returncode == 0, (
            f"{block.id} run {number} of {runs_of(block)} exited {done.returncode}\n"
            f"--- script\n{prepare(block.text)}"
            f"--- stdout (end)\n{done.stdout[-3000:]}\n--- stderr (end)\n{done.stderr[-3000:]}"
        )
    assert len(runs) == runs_of(block)


def test_blocks_found_and_no_test_list_short() -> None:
    pages = {block.page for block in RUN_BLOCKS}
    assert "README.md" in pages
    assert len(RUN_BLOCKS) >= 10
    skipped = [block for block in ALL_BLOCKS if block.no_test is not None]
    assert len(skipped) <= MAX_NO_TEST, [block.id for block in skipped]
    assert all(block.no_test for block in skipped), "every no-test marker gives its reason"


def test_blocks_that_leave_files_at_a_named_path_run_twice() -> None:
    by_id = {block.id: block for block in RUN_BLOCKS}
    offline = [b for b in RUN_BLOCKS if b.page == "docs/judge.md" and "fake_anthropic.py" in b.text]
    assert len(offline) == 1 and runs_of(offline[0]) == 2  # the offline recipe, its URL file
    assert runs_of(Block("x.md", 1, "python -m locomo_exp hydra.run.dir=outputs/a\n", None)) == 2
    assert runs_of(Block("x.md", 1, "python -m locomo_exp -m hydra.sweep.dir=s f1=a,b\n", None)) == 2
    assert runs_of(Block("x.md", 1, "cat > answers.json <<'EOF'\n[]\nEOF\n", None)) == 2
    assert runs_of(Block("x.md", 1, "python -m locomo_exp f1=squad\n", None)) == 1
    assert sum(runs_of(block) == 2 for block in by_id.values()) >= 8


def test_prepare_rewrites_interpreter_data_and_tracking() -> None:
    text = (
        ".venv/bin/python -m locomo_exp f1=squad   # the SQuAD variant\n"
        "python -m locomo_exp -m f1=locomo,mem0 \\\n    data.path=../shared/data/x.json\n"
        ".venv/bin/python -m locomo_exp tracking.experiment=t\n"
        "cat a.md\n"
        ".venv/bin/python tests/fake_anthropic.py --latency 0 &\n"
    )
    python = shlex.quote(sys.executable)
    assert prepare(text).splitlines() == [
        f"{python} -m locomo_exp f1=squad tracking=none # the SQuAD variant",
        f"{python} -m locomo_exp -m f1=locomo,mem0      data.path={SHARED_DATA}/x.json tracking=none",
        f"{python} -m locomo_exp tracking.experiment=t",
        "cat a.md",
        f"{python} {shlex.quote(str(ROOT))}/tests/fake_anthropic.py --latency 0 &",
    ]


def test_readme_test_command_is_the_ci_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
