"""A 100-question judged BEAM run against the fake API, per judged unit, beside a LoCoMo run's.

Both jobs run in this process, against one fake Messages API served from a separate process
(``tests/fake_anthropic.py --latency L --reply ...``; the reply is valid for both: a BEAM item
score of 1, a LoCoMo rubric score of 1), with ``tracking=none``, each with a new judge cache,
after one warm-up pass of both (imports) that is not counted:

- BEAM: the first 100 rows of ``../shared/data/beam/beam_10m_results.json`` written to a
  temporary file, ``benchmark=beam scorer=judge``: one call per rubric item.
- LoCoMo: Zep's published answers (``../shared/data/predictions/zep_locomo_grades.json``,
  ``data=zep``), ``scorer=judge judge.runs=1 judge.audit.n=0``: one call per question.
- LoCoMo of BEAM's size: the same answers with ``data.limit=<BEAM's item count>
  data.seed=0`` (a stratified sample, the same questions every time): as many judged
  units as the BEAM run, so the fixed costs of a run (the first call sent alone, the
  pool's tail, opening and closing the cache and the client, the outputs' writes) are
  spread over the same number of units.

Three phases each: the dry run (``judge.dry_run=true``), the judged run (every unit paid), and
the re-run from the cache (the report: no call). Printed: seconds, units and milliseconds per
unit of each phase, the ratio BEAM / LoCoMo per unit against the full LoCoMo run, and then
against the LoCoMo run of BEAM's size (target <= 1; docs/beam.md says why both are printed).
Run from the project root:
``.venv/bin/python benchmarks/beam_judged.py [--latency 0.02] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import REPO

SHARED = REPO.parent / "shared" / "data"
BEAM_FILE = SHARED / "beam" / "beam_10m_results.json"
ZEP_FILE = SHARED / "predictions" / "zep_locomo_grades.json"
REPLY = json.dumps({"score": 1, "reason": "same", "explanation": "same"})


def _compose(*overrides: str) -> Any:
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from locomo_exp.benchmarks.names import registry_name_problems
    from locomo_exp.config import register_configs, to_experiment_config

    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(version_base="1.3", config_dir=str(REPO / "locomo_exp" / "conf")):
        composed = compose(config_name="config", overrides=list(overrides))
        return to_experiment_config(composed, registry_name_problems)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def beam_phases(work: Path, url: str, n: int) -> tuple[int, dict[str, float]]:
    from locomo_exp.benchmarks.beam.job import run_beam

    data = json.loads(BEAM_FILE.read_text(encoding="utf-8"))
    data["evaluations"] = data["evaluations"][:n]
    path = work / "beam_100.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    units = sum(len(row["rubric"]) for row in data["evaluations"])
    common = ("data=file", f"data.path={path}", "tracking=none", "benchmark=beam",
              "scorer=judge", f"judge.base_url={url}", "judge.progress=false",
              f"judge.cache_path={work / 'beam.sqlite'}", "overwrite=true",
              "judge.audit.n=0")  # like the LoCoMo run: items only, no audit controls
    times = {}
    for phase, extra in (("dry run", ("judge.dry_run=true",)), ("judged", ()), ("report", ())):
        cfg = _compose(*common, *extra)
        times[phase], result = _timed(lambda cfg=cfg: run_beam(cfg, work / "beam_out", work))
        if phase != "dry run":
            counts = result.summary["judge"]["counts"]
            made = counts["calls_made"]
            assert made == (units if phase == "judged" else 0), (phase, made, units)
    return units, times


def locomo_phases(work: Path, url: str, limit: int | None = None
                  ) -> tuple[int, dict[str, float]]:
    """LoCoMo's three phases on Zep's answers; ``limit``: a ``data.limit`` sample (seed 0)."""
    from locomo_exp.experiment import run_experiment

    name = "locomo" if limit is None else f"locomo_{limit}"
    sample = () if limit is None else (f"data.limit={limit}", "data.seed=0")
    common = ("data=zep", f"data.path={ZEP_FILE}", "tracking=none", "scorer=judge",
              "judge.runs=1", "judge.audit.n=0", f"judge.base_url={url}",
              "judge.progress=false", f"judge.cache_path={work / (name + '.sqlite')}",
              "overwrite=true", *sample)
    times = {}
    units = 0
    for phase, extra in (("dry run", ("judge.dry_run=true",)), ("judged", ()), ("report", ())):
        cfg = _compose(*common, *extra)
        times[phase], result = _timed(
            lambda cfg=cfg: run_experiment(cfg, work / f"{name}_out", work))
        if phase == "judged":
            units = int(result.summary["judge"]["counts"]["runs_total"])
    return units, times


def _print_ratios(b_units: int, b_times: dict[str, float], ref_units: int,
                  ref_times: dict[str, float], label: str, into: dict[str, list[float]]
                  ) -> None:
    """Print each phase's ms per unit of BEAM and the reference ``label``, and their ratio
    (appended to ``into[phase]``)."""
    for phase in b_times:
        b_ms = 1000 * b_times[phase] / b_units
        r_ms = 1000 * ref_times[phase] / ref_units
        into.setdefault(phase, []).append(b_ms / r_ms)
        print(f"  {phase:8s} BEAM {b_times[phase]:6.2f} s = {b_ms:6.3f} ms/unit | "
              f"{label} {ref_times[phase]:6.2f} s = {r_ms:6.3f} ms/unit | "
              f"ratio {b_ms / r_ms:5.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.02, help="fake API latency, s")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args()
    for needed in (BEAM_FILE, ZEP_FILE):
        if not needed.exists():
            print(f"needs {needed}", file=sys.stderr)
            return 2
    os.environ["ANTHROPIC_API_KEY"] = "fake-key-for-benchmark"
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "fake_anthropic.py"), "--latency",
         str(args.latency), "--reply", REPLY], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    ratios: dict[str, list[float]] = {}
    equal_ratios: dict[str, list[float]] = {}
    try:
        for repeat in range(-1, args.repeats):  # repeat -1 warms imports up: not counted
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp)
                b_units, b_times = beam_phases(work, url, args.questions)
                l_units, l_times = locomo_phases(work, url)
                e_units, e_times = locomo_phases(work, url, limit=b_units)
            assert e_units == b_units, (e_units, b_units)  # the sample's judged units
            if repeat < 0:
                continue
            print(f"repeat {repeat + 1}: BEAM {args.questions} questions = {b_units} rubric "
                  f"items; LoCoMo (Zep) = {l_units} judged questions (1 run)")
            _print_ratios(b_units, b_times, l_units, l_times, "LoCoMo", ratios)
            # the same number of units: the same fixed costs per unit
            _print_ratios(b_units, b_times, e_units, e_times,
                          f"LoCoMo of BEAM's size ({e_units} questions)", equal_ratios)
    finally:
        proc.kill()
        proc.wait()
    print("median ratio BEAM / LoCoMo per judged unit: " + ", ".join(
        f"{phase} {statistics.median(values):.2f}" for phase, values in ratios.items()))
    print("median ratio BEAM / LoCoMo of BEAM's size per judged unit: " + ", ".join(
        f"{phase} {statistics.median(values):.2f}" for phase, values in equal_ratios.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
