"""A LongMemEval MLflow metric name means the same verdicts in every run (trial 4, finding 10).

``lme/overall`` was the stored labels in a stored-label run (72.40) and this judge's figure in
a judged run (0.00), so MLflow's Compare put two judges under one name. Now ``lme_j/*`` is
always this project's judge and ``lme_stored/*`` always the file's stored verdicts.
"""

from __future__ import annotations

from fake_anthropic import text
from lme_helpers import GPT4O, REFERENCE, need_shared

from locomo_exp.benchmarks.longmemeval import tracking as lme_tracking
from locomo_exp.benchmarks.longmemeval.job import run_longmemeval


def test_stored_and_judged_runs_name_each_source_the_same_way(
    typed_config, tmp_path, fake_anthropic  # type: ignore[no-untyped-def]
) -> None:
    need_shared()
    common = ("data=file", "tracking=none", "benchmark=longmemeval", f"data.path={GPT4O}",
              f"data.reference={REFERENCE}")
    stored = run_longmemeval(typed_config(*common), tmp_path / "stored", tmp_path)
    fake_anthropic.responder = lambda request: text("no")
    judged = run_longmemeval(
        typed_config(*common, "scorer=judge", "judge.audit.n=0", "judge.progress=false",
                     f"judge.base_url={fake_anthropic.url}"),
        tmp_path / "judged", tmp_path,
    )
    a, b = lme_tracking.run_metrics(stored.summary), lme_tracking.run_metrics(judged.summary)
    assert round(a["lme_stored/overall"], 2) == round(b["lme_stored/overall"], 2) == 72.40
    assert "lme_j/overall" not in a and b["lme_j/overall"] == 0.0
    assert not [name for name in {*a, *b} if name.startswith("lme/") and name.split("/")[1] in
                ("overall", "task_avg", "abstention", "questions")]
    figures = {"overall", "task_avg", "abstention", "questions", "multi-session"}
    assert figures <= {n.split("/", 1)[1] for n in b if n.startswith("lme_j/")}
    assert figures <= {n.split("/", 1)[1] for n in a if n.startswith("lme_stored/")}
    # the description heads with the headline verdicts' own figure
    card = {"verdicts": "judge", "stored_judge_source": None}
    note = lme_tracking.run_description(b, judged.summary, card)
    # a flagged run opens with its warning (MLflow shows it "Finished"), then its result
    assert note.startswith("**⚠ Run status: WARNING — J deflated (")
    assert note.split("\n\n")[1].startswith("**overall 0.00**")
    assert lme_tracking.run_description(a, stored.summary, card).startswith("**overall 72.40**")
