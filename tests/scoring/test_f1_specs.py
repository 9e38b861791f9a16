"""One list of lexical metric specs: names, versions, titles and config choices derive from it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import PROJECT_ROOT

from locomo_exp.config import F1Variant
from locomo_exp.report.lexical import lexical_columns, render_lexical_table
from locomo_exp.results import GroupStats, InputInfo, QARecord, RunSummary
from locomo_exp.scoring import BLEU1_VERSION, score_lexical
from locomo_exp.scoring.aggregate import lexical_aggregates
from locomo_exp.scoring.specs import (
    F1_FUNCTIONS,
    F1_VARIANTS,
    F1_VERSIONS,
    LEXICAL_METRICS,
    LEXICAL_SPECS,
    METRIC_TITLES,
    MetricSpec,
    UnknownMetricError,
    f1_variant,
    lexical_spec,
)

F1_CONF = PROJECT_ROOT / "locomo_exp" / "conf" / "f1"


def test_registry_lists_three_f1_variants_and_bleu1_in_report_order() -> None:
    assert [s.metric for s in LEXICAL_SPECS] == ["f1_locomo", "f1_squad", "f1_mem0", "bleu1"]
    assert F1_VARIANTS == ("locomo", "squad", "mem0")
    assert LEXICAL_METRICS == ("f1", "f1_locomo", "f1_squad", "f1_mem0", "bleu1")


def test_every_spec_is_higher_is_better_on_a_0_1_scale_with_a_source() -> None:
    for spec in LEXICAL_SPECS:
        assert spec.higher_is_better is True
        assert spec.scale == (0.0, 1.0)
        assert spec.source


def test_f1_variant_config_choices_are_the_registry_names() -> None:
    assert [v.value for v in F1Variant] == sorted(F1_VARIANTS)  # from the conf/f1 presets
    assert F1Variant("mem0").value == "mem0"


def test_every_conf_f1_yaml_selects_a_registered_variant_and_every_variant_has_one() -> None:
    by_file = {
        p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in F1_CONF.glob("*.yaml")
    }
    assert {name: conf["variant"] for name, conf in by_file.items()} == {v: v for v in F1_VARIANTS}


def test_versions_functions_and_titles_are_derived_from_the_specs() -> None:
    assert F1_VERSIONS == {s.name: s.version for s in LEXICAL_SPECS if s.kind == "f1"}
    assert BLEU1_VERSION == lexical_spec("bleu1").version
    assert list(F1_FUNCTIONS) == list(F1_VARIANTS)
    assert METRIC_TITLES == {
        "f1": "F1 (reported variant)",
        "f1_locomo": "F1, LoCoMo scorer (mean per question)",
        "f1_locomo_official": "F1, LoCoMo's own aggregate (round(3) first)",
        "f1_squad": "F1, SQuAD-style stemmed",
        "f1_mem0": "F1, Mem0 harness",
        "bleu1": "BLEU-1 (Mem0 harness)",
    }


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        # "the cat" vs "cats": locomo/squad stem cats -> cat and drop "the"; mem0 keeps both tokens
        pytest.param("locomo", 1.0, id="locomo"),
        pytest.param("squad", 1.0, id="squad"),
        pytest.param("mem0", 0.0, id="mem0"),
    ],
)
def test_spec_function_scores_one_reference(variant: str, expected: float) -> None:
    assert f1_variant(variant).function("the cat", "cats", 4) == expected


def test_unknown_f1_variant_names_the_available_ones() -> None:
    record = QARecord(question_id="a", question="q", ground_truth="x", prediction="x", category=4)
    with pytest.raises(UnknownMetricError) as info:
        score_lexical([record], "bogus")
    assert str(info.value) == "unknown F1 variant 'bogus'. Available: locomo, squad, mem0"


def test_unknown_lexical_metric_names_the_available_ones() -> None:
    with pytest.raises(UnknownMetricError) as info:
        lexical_spec("rouge")
    assert str(info.value) == (
        "unknown lexical metric 'rouge'. Available: f1_locomo, f1_squad, f1_mem0, bleu1"
    )


@pytest.mark.parametrize("attribute", ["title", "short_title", "version", "source", "name"])
def test_a_spec_without_title_version_or_source_is_refused(attribute: str) -> None:
    fields = dict(
        name="foo",
        kind="f1",
        function=lambda p, g, c: 0.0,
        version="foo/v1",
        title="F1, foo",
        short_title="F1 (foo)",
        source="here",
    )
    fields[attribute] = " "
    with pytest.raises(ValueError, match=f"MetricSpec '.*': {attribute} must not be empty"):
        MetricSpec(**fields)


def _summary_with_metrics(names: list[str]) -> RunSummary:
    stats = GroupStats(mean=0.5, count=1, min=0.5, max=0.5)
    keys = ("1", "2", "3", "4", "5", "overall_1_4", "overall")
    return RunSummary(
        input=InputInfo(path="x.json", sha256="s", format="qa_results"),
        versions={},
        category_names={},
        counts=dict.fromkeys(keys, 1),
        conversations={"overall": 1},
        metrics={name: dict.fromkeys(keys, stats) for name in names},
        latency={},
    )


def test_report_has_one_column_per_scored_lexical_metric_titled_by_its_spec() -> None:
    row = score_lexical(
        [QARecord(question_id="a", question="q", ground_truth="x", prediction="x", category=4)]
    )[0]
    # the summary's metrics: every per-question metric, plus f1_locomo_official after f1_locomo
    columns = lexical_columns(_summary_with_metrics(list(lexical_aggregates([row], [4]))))
    assert columns == list(METRIC_TITLES.items())


def test_a_metric_without_a_spec_is_shown_under_its_name_not_dropped() -> None:
    # e.g. a summary.json written by a later version with a variant this one does not know
    table = render_lexical_table(_summary_with_metrics(["f1", "f1_future"]))
    assert table.splitlines()[0] == "| category | n | F1 (reported variant) | f1_future |"


def test_adding_a_variant_touches_f1_py_specs_py_and_one_yaml() -> None:
    # the registry is the only Python table of variants: config/schema.py reads F1Variant from
    # the conf/f1 presets (it may not import the registry), checked against it above
    config_source = (PROJECT_ROOT / "locomo_exp" / "config" / "schema.py").read_text(encoding="utf-8")
    assert '"squad"' not in config_source and "squad =" not in config_source
    report_dir = PROJECT_ROOT / "locomo_exp" / "report"
    assert not any(
        "F1, Mem0 harness" in p.read_text(encoding="utf-8") for p in report_dir.glob("*.py")
    )
    assert Path(F1_CONF / "mem0.yaml").is_file()
