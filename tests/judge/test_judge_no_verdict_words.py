"""A judge run with no verdict fails with one line in words, not a raw Python dict
(trial 5, finding 15)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLE, run_job
from fake_openai import FakeOpenAIServer
from fake_server import judge_values

from locomo_exp.config import JudgeConfig, ScorerName
from locomo_exp.config.schema import JudgeAuditConfig
from locomo_exp.experiment import JudgeErrorRateExceeded


def test_every_reply_unreadable_by_the_template_fails_with_the_counts_in_words(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    # the fake's default reply {"score": 80} has no "label": the shipped template reads none
    judge = JudgeConfig(**judge_values(
        fake_openai.base_url, tmp_path, provider="openai", model="gpt-4o-mini-2024-07-18",
        api_key_env="OPENAI_API_KEY", protocol="template", template="binary-label-own-words",
        runs=1, audit=JudgeAuditConfig(n=0),
    ))  # fmt: skip
    with pytest.raises(JudgeErrorRateExceeded) as raised:
        run_job(tmp_path, scorer=ScorerName.judge, judge=judge, path=EXAMPLE)
    message = str(raised.value)
    assert message.startswith(
        "no valid judge verdict: 16 parse failure(s), 0 reply(ies) without a verdict, 0 API "
        "error(s) out of 16 judge run(s); J is not measured; scores.jsonl keeps each raw reply "
        "and error; outputs are in "
    )
    assert "{" not in message  # no Python dict
