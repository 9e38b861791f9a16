"""Issue 26 §1: the generic packages name no benchmark; LongMemEval lives in one package.

Greps ``locomo_exp/`` (module names, then the code and config text of ``.py`` and ``.yaml``
files) for ``lme_`` / ``longmemeval`` (any case) outside ``locomo_exp/benchmarks/longmemeval/``
and the registry. What must stay is listed below with the number of lines that mention it,
so the list can only shrink: a new mention, or a new file with one, fails.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "locomo_exp"
HOME = PACKAGE / "benchmarks" / "longmemeval"
NAME = re.compile(r"lme_|longmemeval", re.IGNORECASE)

ALLOWED_MODULES = {
    # the benchmark's facts (question types, sizes, variants): config/ and judge/ below the
    # benchmarks layer read them
    "benchmark/longmemeval.py",
    # LongMemEval's judge protocol: judge/protocols is the one registry of protocols
    "judge/protocols/longmemeval.py",
    # the `benchmark=longmemeval` preset (Hydra config group, not Python)
    "conf/benchmark/longmemeval.yaml",
}

ALLOWED_MENTIONS = {
    # the registry lists the plug-in's module path
    "benchmarks/registry.py": 1,
    # the facts module, its re-export and the spec registry of benchmark facts
    "benchmark/longmemeval.py": 17,
    "benchmark/__init__.py": 3,
    "benchmark/spec.py": 12,
    # the protocol and the protocol registry; BEAM's judge borrows its yes/no reading
    "judge/protocols/longmemeval.py": 14,
    "judge/protocols/__init__.py": 5,
    "benchmarks/beam/judge_prompts.py": 1,
    # conf yaml: the preset, and presets whose comments point to it
    "conf/benchmark/longmemeval.yaml": 7,
    "conf/benchmark/locomo.yaml": 1,
    "conf/judge/gpt-4o.yaml": 1,
    "conf/templates/yes-no-by-kind-own-words.yaml": 2,
    # not yet moved (issue 26 §2-3, one job and one run log): docstrings and comments that
    # name LongMemEval as an example, the judge's per-kind templates, the typed results'
    # notes (a LongMemEval row's sweep MLflow names now come from its run log: issue 26 §3)
    "config/checks.py": 2,
    "report/judge_match.py": 2,
    "report/provenance.py": 2,
    "sweep/plan.py": 5,
    "compare/run_dirs.py": 1,
    "results/record.py": 1,
    "results/checks_read.py": 2,
    "results/run.py": 2,
    "tracking/headline.py": 2,
    "trust/budget.py": 4,
    "trust/checks.py": 1,
    "judge/estimate.py": 1,
    "judge/spend.py": 1,
    "judge/preflight.py": 3,
    "judge/protocols/template.py": 2,
    "judge/protocols/templates/verdicts.py": 2,
    "judge/protocols/templates/settings.py": 1,
    "judge/protocols/templates/schema.py": 1,
    "judge/protocols/templates/checks.py": 2,
}


def _outside_home() -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*")
        if p.suffix in (".py", ".yaml") and HOME not in p.parents and "__pycache__" not in p.parts
    )


def mentions() -> dict[str, int]:
    """Lines naming LongMemEval per file outside its package (path relative to locomo_exp/)."""
    found = {}
    for path in _outside_home():
        lines = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if NAME.search(line))
        if lines:
            found[path.relative_to(PACKAGE).as_posix()] = lines
    return found


def test_no_longmemeval_module_outside_its_package() -> None:
    named = [p.relative_to(PACKAGE).as_posix() for p in _outside_home() if NAME.search(p.name)]
    assert sorted(named) == sorted(ALLOWED_MODULES)


def test_the_longmemeval_package_holds_its_modules() -> None:
    modules = {p.name for p in HOME.glob("*.py")}
    assert {"__init__.py", "answers.py", "reference.py", "scoring.py", "checks.py",
            "controls.py", "dry_run.py", "report.py", "summary.py", "baselines.py",
            "compare.py", "compare_job.py", "tracking.py", "job.py", "sweep_rows.py"} <= modules
    assert not [name for name in modules if name.startswith("lme_")]


def test_no_new_longmemeval_mention_outside_its_package() -> None:
    found = mentions()
    over = {f: (n, ALLOWED_MENTIONS.get(f, 0)) for f, n in found.items()
            if n > ALLOWED_MENTIONS.get(f, 0)}
    assert over == {}, f"file: (lines now, allowed); move the code to benchmarks/longmemeval/: {over}"
    print(f"{sum(found.values())} lines in {len(found)} files outside benchmarks/longmemeval/")


def test_the_allow_list_is_not_stale() -> None:
    # a mention removed shrinks the list: lower the count (or drop the file) with it
    found = mentions()
    stale = {f: (found.get(f, 0), n) for f, n in ALLOWED_MENTIONS.items() if found.get(f, 0) < n}
    assert stale == {}


def test_the_registry_lists_longmemeval_first() -> None:
    from locomo_exp.benchmarks.registry import PLUGINS, registered

    assert PLUGINS[0] == "locomo_exp.benchmarks.longmemeval"
    assert registered()[0].name == "longmemeval"
    assert "longmemeval" in registered()[0].formats
