"""The handed mem0 Platform 10M run: every published figure from its stored item verdicts.

Reads ../shared/data/beam/beam_10m_results.json where it lies (skipped when absent). Published
figures: mem0ai/memory-benchmarks README.md, "Results -> Mem0 Platform -> BEAM".
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any

import numpy as np
import pytest
from beam_helpers import RESULTS_10M, config
from conftest import clean_env, mlflow_runs, run_cli_ok
from fake_openai import FAKE_OPENAI_KEY

from locomo_exp.benchmarks import plugin_for
from locomo_exp.benchmarks.beam.baselines import MEM0_PLATFORM_10M
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.config import TrackingConfig

pytestmark = pytest.mark.skipif(not RESULTS_10M.is_file(),
                                reason=f"shared BEAM data not found at {RESULTS_10M}")

PUBLISHED = {  # ability: (average as printed, passes, questions)
    "abstention": ("0.400", 8, 20),
    "contradiction_resolution": ("0.325", 5, 20),
    "event_ordering": ("0.202", 3, 20),
    "information_extraction": ("0.562", 11, 20),
    "instruction_following": ("0.825", 18, 20),
    "knowledge_update": ("0.750", 16, 20),
    "multi_session_reasoning": ("0.261", 6, 20),
    "preference_following": ("0.904", 19, 20),
    "summarization": ("0.469", 11, 20),
    "temporal_reasoning": ("0.163", 4, 20),
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("beam10m")
    return run_beam(config(RESULTS_10M), tmp / "out", tmp)


def rows() -> list[dict[str, Any]]:
    return json.loads(RESULTS_10M.read_text(encoding="utf-8"))["evaluations"]


def test_the_plain_input_is_claimed_by_beam(tmp_path: Path) -> None:
    plugin = plugin_for(config(RESULTS_10M), tmp_path)
    assert plugin is not None and plugin.name == "beam"


def test_overall_pass_rate_and_average_score_equal_the_published_figures(run: Any) -> None:
    overall = run.summary["figures"]["beam-nugget"]["overall"]
    assert (overall["passes"], overall["n"]) == (101, 200)
    assert f"{overall['pass_rate']:.1f}" == "50.5"
    assert f"{overall['avg_score']:.3f}" == "0.486"
    assert overall["avg_score"] == pytest.approx(0.4860235)


@pytest.mark.parametrize("ability", sorted(PUBLISHED))
def test_each_ability_equals_the_published_average_and_passes(run: Any, ability: str) -> None:
    block = run.summary["figures"]["beam-nugget"]["abilities"][ability]
    assert (f"{block['avg_score']:.3f}", block["passes"], block["n"]) == PUBLISHED[ability]
    assert MEM0_PLATFORM_10M.abilities[ability][0] == float(PUBLISHED[ability][0])


def test_overall_interval_is_the_cluster_bootstrap_over_chats_computed_independently(
    run: Any,
) -> None:
    # the statistic of a resample: pooled mean of the question scores of the chats drawn;
    # draws: numpy default_rng(seed 0), one (1000, k) draw of chat indices in sorted chat order
    by_chat: dict[str, list[float]] = defaultdict(list)
    for row in rows():
        items = [n["score"] for n in row["cutoff_results"]["top_200"]["nugget_scores"]]
        by_chat[f"10M_{row['conversation_idx']}"].append(round(fmean(items), 4))
    chats = sorted(by_chat)
    draws = np.random.default_rng(0).integers(0, len(chats), size=(1000, len(chats)))
    means = []
    for draw in draws:
        pooled = [s for i in draw for s in by_chat[chats[i]]]
        means.append(sum(pooled) / len(pooled))
    low, high = np.quantile(means, [0.025, 0.975])
    ci = run.summary["figures"]["beam-nugget"]["overall"]["avg_score_ci"]
    assert ci == pytest.approx([low, high], abs=1e-12)
    assert ci[0] < 0.486 < ci[1]


def test_official_figures_truncate_halves_and_average_over_chats(run: Any) -> None:
    # independent: int() of each stored verdict, question mean, per-chat mean, mean over chats
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows():
        items = [int(n["score"]) for n in row["cutoff_results"]["top_200"]["nugget_scores"]]
        per[row["question_type"]][str(row["conversation_idx"])].append(fmean(items))
    official = run.summary["figures"]["beam-official"]["abilities"]
    for ability, chats in per.items():
        got = official[ability]["score"]
        if ability == "event_ordering":
            assert got is None and "not measured" in official[ability]["reason"]
        else:
            assert got == pytest.approx(fmean(fmean(v) for v in chats.values()))
    assert official["contradiction_resolution"]["score"] == pytest.approx(0.3125)
    assert official["summarization"]["score"] == pytest.approx(0.25222, abs=1e-5)
    assert run.summary["figures"]["beam-official"]["mean_of_abilities"] is None


def test_outputs_name_the_profile_the_judge_and_one_row_per_question(run: Any) -> None:
    out = run.output_dir
    summary = json.loads((out / "summary.json").read_text())
    card = json.loads((out / "card.json").read_text())
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert summary["schema_version"] == 2
    assert summary["verdicts"] == {"source": "stored", "judge_model": "gpt-5"}
    assert card["headline_profile"] == "beam-nugget" and card["verdicts"] == "stored (gpt-5)"
    assert set(card["profiles"]) == {"beam-nugget", "beam-official"}
    assert len(scores) == 200 and sum(r["beam-nugget"]["pass"] for r in scores) == 101
    assert (out / "config.yaml").is_file()
    report = (out / "report.md").read_text()
    assert "## Profile beam-nugget" in report and "## Profile beam-official" in report
    assert "| **overall** | 200 | 0.486" in report
    assert "judge gpt-5" in report


def test_baseline_is_comparable_only_under_its_own_profile(run: Any) -> None:
    entry = run.summary["baselines"][0]
    assert entry["not_comparable"]["beam-nugget"] is None
    assert "profile beam-official vs beam-nugget" in entry["not_comparable"]["beam-official"]


def test_mlflow_run_logs_the_figures(tmp_path: Path) -> None:
    cfg = config(RESULTS_10M)
    cfg.tracking = TrackingConfig(enabled=True, experiment="beam-test")
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    (logged,) = mlflow_runs(f"sqlite:///{tmp_path / 'mlflow.db'}", "beam-test")
    assert logged.info.run_id == result.run_id
    assert logged.data.metrics["beam-nugget/pass_rate/overall"] == 50.5
    assert logged.data.metrics["beam-nugget/avg_score/abstention"] == pytest.approx(0.4)
    assert logged.data.metrics["beam-official/score/contradiction_resolution"] == 0.3125
    assert "beam-official/score/event_ordering" not in logged.data.metrics
    assert logged.data.params["verdicts.judge_model"] == "gpt-5"
    assert logged.data.tags["profile"] == "beam-nugget"


@pytest.mark.slow
def test_the_plain_command_prints_every_published_figure(
    tmp_path: Path, fake_anthropic: Any, fake_openai: Any
) -> None:
    # both providers' keys and endpoints are set (fakes on 127.0.0.1), so a judge call
    # would be counted: the plain command makes none
    env = clean_env(fake_anthropic, OPENAI_API_KEY=FAKE_OPENAI_KEY,
                    OPENAI_BASE_URL=fake_openai.base_url)
    done = run_cli_ok("data=file", f"data.path={RESULTS_10M}", "hydra.run.dir=out",
                      cwd=tmp_path, env=env)
    assert fake_anthropic.requests == [] and fake_openai.requests == []  # no judge call
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["run_log"]["judge"] is None
    out = done.stdout
    assert "| **overall** | 200 | 0.486 " in out and "| 101/200 | 50.5% " in out
    for ability, (avg, passes, n) in PUBLISHED.items():
        label = ability.replace("_", " ").replace("multi session", "multi-session")
        assert f"| {label} | {n} | {avg} " in out, ability
        assert f"| {passes}/{n} |" in out.split(f"| {label} | {n} | {avg} ", 1)[1].split("\n")[0]
    assert "Profile beam-nugget" in out and "Profile beam-official" in out
    assert "judge gpt-5" in out
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "report.md", "summary.json", "scores.jsonl", "card.json", "config.yaml"}
