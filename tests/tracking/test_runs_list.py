"""The runs list is readable (issue 30 §4): no tag repeats a param, the sweep plot is a chart.

MLflow's runs table lists every param, metric and tag as a column; a tag that repeats a param
(``scorer`` beside ``scorer.name``) is a second column with the same fact. The sweep plot
(J and F1 against the swept value with 95% interval bars) is logged as an MLflow image as
well as an artifact, so the parent's chart views show it: their own charts draw no interval.
"""

from __future__ import annotations

from pathlib import Path

import mlflow
from PIL import Image

from locomo_exp.tracking import judge_tags, run_tags
from locomo_exp.tracking.sweep import SWEEP_PLOT_KEY, finish_parent_run, start_parent_run


def test_run_tags_are_only_the_run_directory() -> None:
    assert run_tags(output_dir="/abs/out") == {"locomo_exp.output_dir": "/abs/out"}
    assert run_tags() == {}


def test_judge_tags_hold_no_param() -> None:
    # judge.mode and judge.batch_ids are params; a dry run and the audit's gate are not
    assert judge_tags({"mode": "batch", "batch": {"batch_ids": ["b1", "b2"]}}) == {}
    assert judge_tags({"mode": "realtime"}, dry_run=True) == {"judge.dry_run": "true"}


def test_sweep_plot_is_logged_as_an_mlflow_image_of_the_parent(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    plot = tmp_path / "sweep_plot.png"
    Image.new("RGB", (40, 30), (200, 10, 10)).save(plot)
    run_id = start_parent_run(uri, "sweeps", "sweep judge.temperature=0.0,0.5", {}, {})

    finish_parent_run(uri, run_id, files=[plot], tags={}, metrics={"sweep/T:0.5/j_overall": 70.0},
                      table=[], status="FINISHED", chart_image=plot)

    client = mlflow.MlflowClient(uri)
    assert "sweep_plot.png" in {a.path for a in client.list_artifacts(run_id)}
    images = sorted(Path(a.path).name for a in client.list_artifacts(run_id, "images"))
    assert images and all(name.startswith(f"{SWEEP_PLOT_KEY}+step+0+") for name in images), images
    png = [name for name in images if name.endswith(".png") and "compressed" not in name]
    assert len(png) == 1
    local = client.download_artifacts(run_id, f"images/{png[0]}", str(tmp_path / "dl"))
    with Image.open(local) as logged:  # the plot's own pixels, not a thumbnail
        assert logged.size == (40, 30) and logged.getpixel((5, 5)) == (200, 10, 10)
    assert client.get_run(run_id).info.status == "FINISHED"


def test_no_chart_image_logs_no_image(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    run_id = start_parent_run(uri, "sweeps", "sweep x", {}, {})
    finish_parent_run(uri, run_id, files=[], tags={}, metrics={}, table=[], status="FINISHED",
                      chart_image=tmp_path / "missing.png")
    assert mlflow.MlflowClient(uri).list_artifacts(run_id, "images") == []
