"""A panel across providers: judge.panel=[sonnet-4-6, gpt-4o-mini] against two fakes."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config, verdict_responder
from fake_openai import FakeOpenAIServer
from judge_helpers import make_records

from locomo_exp.config import JudgeAuditConfig
from locomo_exp.judge import run_judge
from locomo_exp.judge.estimate import ESTIMATED_OUTPUT_TOKENS
from locomo_exp.judge.preflight import estimate_prompt_tokens
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.tracking.trust import trust_metrics
from locomo_exp.trust.job import plan_trust, run_trust

# 12 questions: both accept 0-4, both reject 5-7, Claude only 8-9, GPT only 10-11
CLAUDE = [True] * 5 + [False] * 3 + [True, True, False, False]
GPT = [True] * 5 + [False] * 3 + [False, False, True, True]


def _pick(answers: list[bool]):  # type: ignore[no-untyped-def]
    return lambda item: answers[int(item.question.split()[-1].rstrip("?"))]


def _setup(fake_anthropic, fake_openai, monkeypatch, tmp_path, **kw):  # type: ignore[no-untyped-def]
    fake_anthropic.responder = verdict_responder(_pick(CLAUDE), "binary")
    fake_openai.responder = verdict_responder(_pick(GPT), "binary")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    return make_judge_config(
        fake_anthropic, tmp_path, protocol="binary", runs=1, min_successful_runs=1,
        audit=JudgeAuditConfig(n=0), panel=["sonnet-4-6", "gpt-4o-mini"], **kw,
    )


def test_panel_across_providers_gives_j_per_model_majority_alpha_and_kappa(
    fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    cfg = _setup(fake_anthropic, fake_openai, monkeypatch, tmp_path)
    records = make_records(12)
    plan = plan_trust(records, cfg, start_dir=tmp_path)
    main = run_judge(records, cfg, start_dir=tmp_path)
    outcome = run_trust(plan, records, cfg, main, start_dir=tmp_path)
    panel = outcome.panel
    assert panel is not None

    claude, gpt = np.array(CLAUDE, float), np.array(GPT, float)
    assert panel.j_per_model == {
        "claude-sonnet-4-6": pytest.approx(100 * claude.mean()),
        "gpt-4o-mini-2024-07-18": pytest.approx(100 * gpt.mean()),
    }
    agreed = claude == gpt
    assert panel.panel_j == pytest.approx(100 * claude[agreed].mean())  # majority of 2
    assert panel.n_unscored == int((~agreed).sum())  # ties
    expected_alpha = krippendorff.alpha(
        reliability_data=np.vstack([claude, gpt]), level_of_measurement="nominal"
    )
    assert panel.alpha == pytest.approx(expected_alpha)
    # Cohen's kappa by hand: p_o = agreement, p_e from the two marginals
    p_o = agreed.mean()
    p_e = claude.mean() * gpt.mean() + (1 - claude.mean()) * (1 - gpt.mean())
    metrics = trust_metrics(outcome)
    kappa = metrics["panel/kappa/claude-sonnet-4-6__gpt-4o-mini-2024-07-18"]
    assert kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    # Claude (the main judge) answered 12; the panel's GPT calls went to the OpenAI fake
    assert len(fake_anthropic.messages_requests()) == 12
    assert len(fake_openai.messages_requests()) == 12
    assert {r.body["model"] for r in fake_openai.messages_requests()} == {"gpt-4o-mini-2024-07-18"}


def test_panel_dry_run_prices_each_model_with_its_own_preset(
    fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    cfg = _setup(fake_anthropic, fake_openai, monkeypatch, tmp_path, dry_run=True)
    records = make_records(12)
    plan = plan_trust(records, cfg, start_dir=tmp_path)
    main = run_judge(records, cfg, start_dir=tmp_path)
    outcome = run_trust(plan, records, cfg, main, start_dir=tmp_path)
    assert fake_anthropic.requests == [] and fake_openai.requests == []
    assert outcome.dry_run is not None
    part = outcome.dry_run.panel["gpt-4o-mini"]
    spec = get_protocol("binary")
    tokens_in = sum(
        estimate_prompt_tokens(
            spec.system_prompt,
            spec.build_prompt(r.question, r.ground_truth, r.prediction, r.category),
        )
        for r in records
    )
    tokens_out = 12 * min(ESTIMATED_OUTPUT_TOKENS, cfg.max_tokens)
    assert part.calls_to_make == 12
    expected = (tokens_in * 0.15 + tokens_out * 0.60) / 1e6  # gpt-4o-mini list price
    assert part.estimated_cost_usd == pytest.approx(expected)
    # sonnet ($3 / $15) is the main judge: its panel calls are the answers' (cache hits)
    assert outcome.dry_run.panel["sonnet-4-6"].calls_to_make == 0
