"""A benchmark plug-in's judge protocol reaches the judge handed in, never by the judge importing it.

Issue 26 §1: ``judge.protocols.PROTOCOLS`` lists the fixed protocols only; the registry of
plug-ins hands theirs in (:func:`locomo_exp.judge.protocols.plugged_protocols`) for a job.
Each check runs in a fresh :class:`contextvars.Context`, outside the tests' autouse fixture
that hands them in as the command line does.
"""

from __future__ import annotations

import contextvars
from dataclasses import replace

import pytest

from locomo_exp.benchmarks.registry import plugin_protocols
from locomo_exp.judge.protocols import (
    all_protocols,
    available_protocols,
    get_protocol,
    plugged_protocols,
)
from locomo_exp.judge.protocols.plugged import plugged_kinds
from locomo_exp.judge.protocols.templates.checks import known_kinds


def _fresh(fn):
    return contextvars.Context().run(fn)


def test_outside_a_job_the_judge_knows_only_its_fixed_protocols() -> None:
    def check() -> None:
        assert available_protocols() == ["binary", "rubric", "template"]
        with pytest.raises(ValueError) as error:
            get_protocol("longmemeval")
        assert str(error.value) == (
            "unknown judge protocol 'longmemeval'. Available: binary, rubric, template"
        )
        assert "abstention" not in known_kinds()

    _fresh(check)


def test_handed_in_the_plugins_protocols_resolve_by_name_with_the_old_list() -> None:
    def check() -> None:
        specs = plugin_protocols()
        with plugged_protocols(specs):
            by_name = {spec.name: spec for spec in specs}
            assert get_protocol("longmemeval") is by_name["longmemeval"]
            assert get_protocol("locomo_plus") is by_name["locomo_plus"]
            assert available_protocols() == [
                "binary", "locomo_plus", "longmemeval", "rubric", "template"
            ]
            with pytest.raises(ValueError) as error:
                get_protocol("likert")
            # the unknown-name line as before issue 26 (the plug-ins' names listed)
            assert str(error.value) == (
                "unknown judge protocol 'likert'. "
                "Available: binary, locomo_plus, longmemeval, rubric, template"
            )
            # a template's by_kind may name the plug-ins' kinds (BEAM's abilities too, whose
            # item protocol is handed in with by_name=False: no judge.protocol name)
            assert {"abstention", "multi-session", "Cognitive", "event_ordering"} <= set(
                plugged_kinds()
            )
            assert "abstention" in known_kinds()
        assert sorted(all_protocols()) == ["binary", "rubric"]  # the block is over

    _fresh(check)


def test_a_nested_block_keeps_the_same_specs_and_refuses_another_with_a_taken_name() -> None:
    def check() -> None:
        specs = plugin_protocols()
        with plugged_protocols(specs), plugged_protocols(specs):
            assert sorted(all_protocols()) == ["binary", "locomo_plus", "longmemeval", "rubric"]
        impostor = replace(specs[0], prompt_version="other")
        with pytest.raises(ValueError, match="two judge protocols are registered as 'longmemeval'"):
            with plugged_protocols([specs[0], impostor]):
                pass
        with pytest.raises(ValueError, match="registered as 'rubric'"):
            with plugged_protocols([replace(specs[0], name="rubric")]):
                pass

    _fresh(check)


def test_a_plugins_run_hands_in_its_own_protocol(tmp_path) -> None:
    # run() outside the command line (no protocols_in_use): the plug-in hands its own in
    from locomo_exp.benchmarks import longmemeval as plugin_package

    seen: list[list[str]] = []

    def fake_job(steps, cfg, output_dir, start_dir, **kwargs):
        seen.append(sorted(all_protocols()))
        raise ValueError("stop here")

    def check() -> None:
        import locomo_exp.benchmarks.pipeline_plugin as pipeline_plugin

        original = pipeline_plugin.run_job
        pipeline_plugin.run_job = fake_job  # the pipeline's job, which LongMemEval's run calls
        try:
            with pytest.raises(ValueError, match="stop here"):
                plugin_package.PLUGIN.run(None, tmp_path, tmp_path)
        finally:
            pipeline_plugin.run_job = original

    _fresh(check)
    assert seen == [["binary", "longmemeval", "rubric"]]
