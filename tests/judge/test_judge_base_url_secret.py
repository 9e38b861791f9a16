"""A token in the judge's address is never written, printed or logged (issue 27, section 4).

``judge.base_url=https://gateway/v1?token=...`` (or ``?api-key=``, ``?key=``) would be
copied by Hydra into ``.hydra/config.yaml`` and ``overrides.yaml``, and by this tool into
``config.yaml``, the card, MLflow's params and the log. Such a value is refused in one line
before anything is written, as a password in ``tracking.uri`` is
(``tests/tracking/test_tracking_uri_secret.py``); the key goes in its environment variable. An
address with a token in the provider's own variable (``ANTHROPIC_BASE_URL``) is never
written either: every output names the endpoint without its query.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import clean_env, run_cli

from locomo_exp.config.secrets import (
    BASE_URL_QUERY_REFUSAL,
    judge_value_problems,
    key_override_problem,
)

SECRET = "tok3nSECRETvalue42"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param(f"https://gw.example.org/v1?token={SECRET}", id="token"),
        pytest.param(f"https://gw.example.org/v1?api-key={SECRET}", id="api-key-hyphen"),
        pytest.param(f"https://gw.example.org/v1?x=1&api_key={SECRET}", id="api_key-second"),
        pytest.param(f"https://gw.example.org/v1?key={SECRET}", id="key"),
        pytest.param(f"https://gw.example.org/v1?access_token={SECRET}", id="access_token"),
        pytest.param(f"https://gw.example.org/v1?X-Api-Key={SECRET}", id="x-api-key"),
        pytest.param(f"http://127.0.0.1:9/v1,https://h/v1?token={SECRET}", id="in-a-sweep"),
    ],
)
def test_a_token_in_base_urls_query_is_refused_on_the_command_line(url: str) -> None:
    for override in (f"judge.base_url={url}", f"+judge.base_url={url}"):
        message = key_override_problem(["scorer=judge", override])
        assert message == BASE_URL_QUERY_REFUSAL
        assert SECRET not in message


def test_a_base_url_with_an_ordinary_query_passes() -> None:
    assert key_override_problem(["judge.base_url=http://127.0.0.1:9/v1?region=eu"]) is None
    assert judge_value_problems("auto", "http://127.0.0.1:9/v1?region=eu") == []


def test_a_config_files_base_url_with_a_token_is_refused(typed_config) -> None:  # type: ignore[no-untyped-def]
    from locomo_exp.config import ConfigValueError

    assert judge_value_problems("auto", f"http://h/v1?token={SECRET}") == [BASE_URL_QUERY_REFUSAL]
    with pytest.raises(ConfigValueError) as raised:  # compose() skips the command-line check
        typed_config(f"judge.base_url='http://h/v1?api-key={SECRET}'")
    assert SECRET not in str(raised.value) and BASE_URL_QUERY_REFUSAL in str(raised.value)


GREPPED = (
    "run/config.yaml", "run/card.json", "run/summary.json", "run/report.md", "run/scores.jsonl",
    "run/locomo_exp.log", "run/.hydra/config.yaml", "run/.hydra/hydra.yaml",
    "run/.hydra/overrides.yaml", "mlflow.db",
)
"""The outputs a run writes that are grepped for the token (with MLflow's artifacts)."""


def _files_holding(root: Path, secret: str) -> list[Path]:
    """Every file under ``root`` holding ``secret``."""
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.slow
def test_cli_refuses_a_token_in_base_url_before_anything_is_written(tmp_path: Path) -> None:
    before = set(tmp_path.rglob("*"))
    result = run_cli("scorer=judge", f"judge.base_url=http://127.0.0.1:9/v1?token={SECRET}",
                     "hydra.run.dir=run", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {BASE_URL_QUERY_REFUSAL}"]
    assert SECRET not in result.stdout + result.stderr
    assert set(tmp_path.rglob("*")) == before  # no run dir, no .hydra/, no store, no log


@pytest.mark.slow
def test_a_token_in_the_providers_variable_is_in_no_output(
    fake_anthropic, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    # the SDK does not keep a base URL's query (the fake answers 404 to POST /): the run
    # stops at the judge, after its F1 outputs and MLflow run are written; none holds it
    env = clean_env(fake_anthropic)
    env["ANTHROPIC_BASE_URL"] = f"{fake_anthropic.url}?token={SECRET}"
    result = run_cli("scorer=both", "judge.audit.n=0", "judge.progress=false", "hydra.run.dir=run",
                     cwd=tmp_path, env=env)
    assert result.returncode == 1
    outputs = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    for expected in GREPPED:
        assert expected in outputs
    assert any(name.startswith("mlartifacts/") for name in outputs)
    assert _files_holding(tmp_path, SECRET) == []
    assert SECRET not in result.stdout + result.stderr
