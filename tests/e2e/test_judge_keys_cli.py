"""A key on the command line is refused before Hydra writes anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from locomo_exp.cli import key_overrides

SECRET = "sk-test-secret-never-written-0123456789"


@pytest.mark.parametrize(
    "override",
    [f"judge.api_key={SECRET}", f"+judge.api_key={SECRET}", f"++judge.api_key={SECRET}",
     f"+api_key={SECRET}", f"judge.auth_token={SECRET}"],
)
def test_key_overrides_are_refused_without_repeating_the_key(override: str) -> None:
    message = key_overrides(["scorer=judge", override])
    assert message is not None
    assert SECRET not in message
    assert message.startswith(override.split("=", 1)[0] + "=...: an API key is never accepted")


def test_other_overrides_pass() -> None:
    assert key_overrides(["judge.api_key_env=MY_KEY", "judge.model=gpt-4o-mini"]) is None


@pytest.mark.slow
@pytest.mark.parametrize("override", [f"judge.api_key={SECRET}", f"+judge.api_key={SECRET}"])
def test_cli_refuses_a_key_before_hydra_writes_its_config(override: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = run_cli("judge=gpt-4o-mini", "scorer=judge", override, f"hydra.run.dir={run_dir}", "tracking=none",
                     cwd=tmp_path, timeout=600)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "never accepted on the command line" in lines[0]
    assert SECRET not in result.stdout + result.stderr
    assert not run_dir.exists()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(SECRET not in p.read_text(errors="replace") for p in written)


# trial 4, finding 1: a key pasted where the variable's name goes (judge.api_key_env), or a
# password in judge.base_url, was written to the card, report, .hydra/ and MLflow.
# built at run time so that no key-shaped literal is committed (secret scanners flag them);
# shorter than KEY_VALUE_RE's 20 characters after sk-
PASTED = "-".join(("sk", "ant", "test", "SECRET123"))


@pytest.mark.parametrize(
    "override",
    [
        pytest.param(f"judge.api_key_env={PASTED}", id="key-as-name"),
        pytest.param("judge.api_key_env=abc-SECRET123", id="not-a-name"),
        pytest.param(f"+judge.api_key_env={PASTED}", id="plus-prefix"),
        pytest.param(f"judge.api_key_env=MY_KEY,{PASTED}", id="in-a-sweep"),
        pytest.param(f"judge.api_key_env=choice(MY_KEY,{PASTED})", id="in-a-choice-sweep"),
    ],
)
def test_api_key_env_must_be_a_variable_name(override: str) -> None:
    message = key_overrides(["scorer=both", override])
    assert message == (
        "judge.api_key_env must name an environment variable (letters, digits, _), not hold a "
        "key; the value given was not saved"
    )
    assert "SECRET123" not in message


@pytest.mark.parametrize(
    "value", ["MY_KEY", "_K2", "auto", "null", "", "A,B", "choice(A,B)"]
)
def test_api_key_env_names_pass(value: str) -> None:
    assert key_overrides([f"judge.api_key_env={value}"]) is None


@pytest.mark.parametrize(
    "url", ["http://u:SECRET123@127.0.0.1:9/v1", "https://SECRET123@host/v1", "http://a,http://u:SECRET123@h"]
)
def test_base_url_with_user_info_is_refused(url: str) -> None:
    message = key_overrides([f"judge.base_url={url}"])
    assert message is not None and message.startswith("judge.base_url must not hold a user name")
    assert "SECRET123" not in message and message.endswith("the value given was not saved")


def test_base_url_without_user_info_passes() -> None:
    assert key_overrides(["judge.base_url=http://127.0.0.1:9/v1?x=a@b"]) is None


def test_a_config_files_values_are_refused_too() -> None:
    from locomo_exp.config.secrets import judge_value_problems

    problems = judge_value_problems(PASTED, "http://u:SECRET123@h/v1")
    assert len(problems) == 2 and not any("SECRET123" in p for p in problems)
    assert judge_value_problems("auto", "http://h/v1") == []
    assert judge_value_problems(None, None) == []


def _files_holding(root: Path, secret: str) -> list[Path]:
    """Every file under ``root`` (outputs, .hydra/, mlflow.db, mlartifacts) holding ``secret``."""
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("scorer=both", "judge.runs=1", "judge.dry_run=true",
                      f"judge.api_key_env={PASTED}"), id="dry-run"),
        pytest.param(("scorer=both", "judge.runs=1", f"judge.api_key_env={PASTED}"), id="paid"),
        pytest.param(("-m", "scorer=both", "judge.runs=1", "judge.dry_run=true",
                      f"judge.api_key_env=MY_KEY,{PASTED}"), id="sweep"),
        pytest.param(("scorer=both", "judge.runs=1", "judge.dry_run=true",
                      "judge.base_url=http://u:SECRET123@127.0.0.1:9"), id="base-url"),
    ],
)
def test_cli_refuses_a_pasted_key_before_anything_is_written(args: tuple[str, ...], tmp_path: Path) -> None:
    before = set(tmp_path.rglob("*"))
    result = run_cli(*args, "hydra.run.dir=run", "hydra.sweep.dir=sweep", cwd=tmp_path, timeout=600)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: judge.")
    assert lines[0].endswith("the value given was not saved")
    assert "SECRET123" not in result.stdout + result.stderr
    assert set(tmp_path.rglob("*")) == before  # no run dir, sweep dir, mlflow.db or cache
    assert _files_holding(tmp_path, "SECRET123") == []


# trial 5, finding 1: a Groq key (gsk_...) pasted into judge.api_key_env is letters, digits and
# _, so it passed the name check and went to the card, report, .hydra/ and MLflow; a Google
# key (AIza...) in judge.model and ${oc.env:ANTHROPIC_API_KEY} in tracking.run_name too.
# Each key is built at run time (no key-shaped literal committed); BODY is its random part.
BODY = "Zq8xW2mN4pL7rT9vB3cY6hJ1kD5fG0sA8eR2tU4i"
VENDOR_KEYS = {
    "groq": "gsk_" + BODY,
    "xai": "xai-" + BODY,
    "google": "AI" + "za" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "huggingface": "hf_" + BODY[:34],
    "replicate": "r8_" + BODY[:37],
    "perplexity": "pplx-" + BODY,
    "github": "gh" + "p_" + BODY[:36],
    "aws": "AK" + "IA" + "ZQ8XW2MN4PL7RT9V",
}


@pytest.mark.parametrize("key", [pytest.param(v, id=k) for k, v in VENDOR_KEYS.items()])
@pytest.mark.parametrize("setting", ["judge.api_key_env", "judge.model", "tracking.run_name"])
def test_a_key_of_any_known_vendor_form_is_refused_without_repeating_it(setting: str, key: str) -> None:
    message = key_overrides(["scorer=judge", f"{setting}={key}"])
    assert message is not None and message.startswith(f"{setting}=...: ")
    assert key not in message and BODY[:12] not in message and key[-12:] not in message


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Zq8xW2mN4pL7rT9vB3cY6hJ1", id="random-mixed-24"),
        pytest.param("MY_" + "a3f9c2e8b7d1f0a4c6e2b9d8", id="hex-part"),
        pytest.param("abcdefghijklmnopqrstuvwxyzABCDEFGH", id="34-letters"),
        pytest.param("key-" + BODY, id="not-a-name"),
    ],
)
def test_api_key_env_with_a_random_part_is_refused(name: str) -> None:
    from locomo_exp.config.key_shapes import key_shaped_name

    assert key_shaped_name(name)
    message = key_overrides([f"judge.api_key_env={name}"])
    assert message is not None and name not in message
    assert "judge.api_key_env" in message


@pytest.mark.parametrize(
    "name",
    ["GROQ_API_KEY", "TOGETHER_API_KEY", "AZURE_OPENAI_API_KEY_EASTUS2", "my_key", "_K2",
     "MY_ORGANISATION_PRODUCTION_OPENAI_API_KEY_V2", "OPENAI_API_KEY_20240601", "HF_TOKEN"],
)
def test_ordinary_variable_names_pass(name: str) -> None:
    from locomo_exp.config.key_shapes import key_shaped_name

    assert not key_shaped_name(name)
    assert key_overrides([f"judge.api_key_env={name}"]) is None


@pytest.mark.parametrize(
    "override",
    [
        "data.path=hf_datasets_locomo_predictions_v2.json",
        "data.path=runs/gsk_small/answers.json",
        "tracking.run_name=ask_about_everything_2024",
        "tracking.run_name=" + "3f2a9c8b7d1f0a4c6e2b9d8a1c3e5f7a9b0d2c4e",  # a git commit
        "judge.model=gemini-2.0-flash-001",
        "data.path=${oc.env:HOME}/answers.json",
    ],
)
def test_ordinary_values_are_not_taken_for_keys(override: str) -> None:
    assert key_overrides([override]) is None


@pytest.mark.parametrize(
    ("override", "variable"),
    [
        pytest.param("tracking.run_name=${oc.env:ANTHROPIC_API_KEY}", "ANTHROPIC_API_KEY", id="provider-key"),
        pytest.param("hydra.run.dir=out/${oc.env:HF_TOKEN,x}", "HF_TOKEN", id="token-with-default"),
        pytest.param("tracking.run_name=${ oc.env:MY_GROQ }", "MY_GROQ", id="named-by-api-key-env"),
        pytest.param("judge.model=${oc.env:HOLDS_A_KEY}", "HOLDS_A_KEY", id="value-is-a-key"),
    ],
)
def test_oc_env_of_a_credential_is_refused(
    override: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLDS_A_KEY", VENDOR_KEYS["groq"])
    monkeypatch.setenv("MY_GROQ", "not-key-shaped-but-secret")
    message = key_overrides(["judge.api_key_env=MY_GROQ", override])
    assert message == (
        f"{override.split('=', 1)[0]}=...: reads {variable} through ${{oc.env:...}}, a "
        "credential's variable: its value would be written to the run's config.yaml, card, "
        "report and MLflow; name the variable in judge.api_key_env instead; the value given "
        "was not saved"
    )


def test_a_resolved_key_from_any_source_is_refused_by_the_config_check(
    typed_config: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # compose() skips the command-line check: what a config file or an interpolation brings
    from locomo_exp.config import ConfigValueError

    monkeypatch.setenv("ANTHROPIC_API_KEY", "realsecretvalue-XYZ123")
    monkeypatch.setenv("PLAIN", "realsecretvalue-XYZ123")
    with pytest.raises(ConfigValueError) as info:
        typed_config("tracking.run_name=${oc.env:PLAIN}", f"judge.model={VENDOR_KEYS['google']}")
    assert str(info.value) == (
        "judge.model=...: its value looks like an API key; it would be written to the run's "
        "config.yaml, card, report and MLflow; a key is read only from its environment variable "
        "(judge.api_key_env); tracking.run_name=...: holds the value of ANTHROPIC_API_KEY (a "
        "credential's environment variable); it would be written to the run's config.yaml, "
        "card, report and MLflow; a key is read only from its environment variable "
        "(judge.api_key_env)"
    )
    monkeypatch.setenv("RUN_LABEL", "baseline-0123")  # not a credential: resolved as before
    assert typed_config("tracking.run_name=${oc.env:RUN_LABEL}").tracking.run_name == "baseline-0123"


def test_an_unset_key_variable_is_named_once() -> None:
    from locomo_exp.config import JudgeConfig
    from locomo_exp.llm.providers import missing_key_message

    message = missing_key_message(JudgeConfig(api_key_env="GROQ_API_KEY"))
    assert message.count("GROQ_API_KEY") == 1
    assert message.startswith("GROQ_API_KEY is not set; export the judge API key")
    pasted = missing_key_message(JudgeConfig(api_key_env=VENDOR_KEYS["groq"]))
    assert BODY not in pasted and pasted.startswith("the variable named by judge.api_key_env is not set")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "env", "secret"),
    [
        pytest.param(("judge.dry_run=true", f"judge.api_key_env={VENDOR_KEYS['groq']}"), {},
                     BODY, id="groq-key-as-name-dry"),
        pytest.param((f"judge.api_key_env={VENDOR_KEYS['groq']}",), {}, BODY, id="groq-key-as-name-paid"),
        pytest.param(("judge.dry_run=true", f"judge.model={VENDOR_KEYS['google']}"), {},
                     VENDOR_KEYS["google"][4:], id="google-key-as-model"),
        pytest.param(("judge.dry_run=true", "tracking.run_name=${oc.env:ANTHROPIC_API_KEY}"),
                     {"ANTHROPIC_API_KEY": "realsecretvalue-XYZ123"}, "realsecretvalue", id="oc-env-key"),
        pytest.param(("judge.dry_run=true", "tracking.run_name=${oc.env:PLAIN}"),
                     {"ANTHROPIC_API_KEY": "realsecretvalue-XYZ123", "PLAIN": "realsecretvalue-XYZ123"},
                     "realsecretvalue", id="oc-env-copy-of-a-key"),
    ],
)
def test_trial5_keys_reach_no_output(args: tuple[str, ...], env: dict[str, str], secret: str,
                                     tmp_path: Path) -> None:
    from conftest import clean_env

    environment = clean_env(**env, MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path / 'mlflow.db'}")
    result = run_cli("scorer=judge", *args, "hydra.run.dir=outputs/run", cwd=tmp_path, env=environment,
                     timeout=120)  # tracking on: mlflow.db and mlartifacts/ would hold a leak
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert secret not in result.stdout + result.stderr
    assert not (tmp_path / "outputs").exists()
    assert _files_holding(tmp_path, secret) == []
