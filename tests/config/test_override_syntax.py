"""Command-line mistakes are one line in one form (``error: ...``) before Hydra starts."""

from __future__ import annotations

import pytest

from locomo_exp.cli import check_command_line, fail
from locomo_exp.config.checks import unknown_override_keys
from locomo_exp.config.override_syntax import override_syntax_problems


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        check_command_line(argv)
    assert stop.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


def test_a_mistyped_group_prefix_gets_a_suggestion_as_a_mistyped_last_part_does() -> None:
    assert unknown_override_keys(
        ["dat.path=x", "data.pth=x", "dat.pth=x", "jduge.runs=3", "judge.run=3", "zzz.yyy=1"]
    ) == [
        ("dat.path", "data.path"),
        ("data.pth", "data.path"),
        ("dat.pth", "data.path"),
        ("jduge.runs", "judge.runs"),
        ("judge.run", "judge.runs"),
        ("zzz.yyy", None),
    ]


def test_dat_path_is_refused_with_the_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert _refusal(["dat.path=x"], capsys) == (
        "error: unknown config key(s): dat.path (did you mean data.path?)\n"
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["data.path"], "error: data.path: not key=value (Hydra: missing EQUAL at '<EOF>')\n"),
        (
            ["judge.temperature=[1"],
            "error: judge.temperature=[1: not key=value (Hydra: no viable alternative at input "
            "'[1')\n",
        ),
        (
            ["f1=squad,locomo", "tracking=none"],
            "error: f1=squad,locomo: several values without -m; add -m to run one job per "
            "value, or quote them to keep one text value (f1='squad,locomo')\n",
        ),
    ],
)
def test_overrides_hydra_cannot_read_are_one_error_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _refusal(argv, capsys) == expected


def test_sweeps_quoted_values_and_flag_values_are_not_problems() -> None:
    assert override_syntax_problems(["-m", "f1=squad,locomo", "judge.runs=1,2"]) == []
    assert override_syntax_problems(["--multirun", "f1=squad,locomo"]) == []
    assert override_syntax_problems(["data.path='a,b'", "--cfg", "job", "-cn", "config"]) == []


def test_every_refusal_has_one_form(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        fail(ValueError("x.json: record [3]: field 'category': missing category"))
    assert stop.value.code == 1
    assert capsys.readouterr().err == "error: x.json: record [3]: field 'category': missing category\n"
