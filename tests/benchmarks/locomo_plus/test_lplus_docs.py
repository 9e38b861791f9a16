"""docs/locomo_plus.md covers what issue 29 asks of it, and the tests it cites exist.

The item set, the layouts, the label map, the two parsers, both definitions of the factual
average, and F1 beside J (``scorer=both``).
"""

from __future__ import annotations

import re

import pytest
from conftest import PROJECT_ROOT

DOC = (PROJECT_ROOT / "docs" / "locomo_plus.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    body = DOC.split(f"\n## {title}\n", 1)[1]
    return " ".join(body.split("\n## ", 1)[0].split())


@pytest.mark.parametrize(
    ("title", "phrases"),
    [
        pytest.param("The unified item set", ["2,387", "unified_input.py", "mod 10"],
                     id="item-set"),
        pytest.param("Scoring a stored run", ["the authors' `judged.json`",
                                              "kumiho's `all_results.json`"], id="layouts"),
        pytest.param("The label map and the figures", [
            "`correct` 1, `partial` 0.5, `wrong` 0", "*unweighted*", "*item-weighted*"],
            id="label-map-and-factual-average"),
        pytest.param("The two parsers", ["**ours**", "**authors**", "\"Incorrect.\""],
                     id="parsers"),
        pytest.param("F1 beside J (`scorer=both`)", ["no F1", "no gold answer", "f1.variant"],
                     id="f1-beside-j"),
    ],
)
def test_each_promised_topic_has_its_section(title: str, phrases: list[str]) -> None:
    text = _section(title)
    for phrase in phrases:
        assert phrase in text, (title, phrase)


def test_every_test_file_the_doc_cites_exists() -> None:
    cited = set(re.findall(r"`(tests/[\w/]+\.py)", DOC))
    assert cited and all((PROJECT_ROOT / path).is_file() for path in cited)
