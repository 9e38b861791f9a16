"""How to open MLflow's UI on a store: the one hint every job and the sweep print."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from locomo_exp.config.secrets import redact_uri, uri_secret_spans

__all__ = ["UI_BASE_URL", "mlflow_command", "open_ui_hint", "redact_uri", "ui_base_url", "ui_url"]

UI_BASE_URL = "http://127.0.0.1:5000"
"""Where ``mlflow ui`` serves by default."""


def ui_url(experiment_id: str, base_url: str = UI_BASE_URL) -> str:
    """The MLflow UI address that opens an experiment on its runs table.

    MLflow 3's UI chooses between its GenAI and its machine-learning views from a
    switch in the sidebar, remembered by the browser (GenAI by default), or from
    ``workflowType`` in the address; this address asks for the machine-learning view.

    Args:
        experiment_id: the experiment's id.
        base_url: where the UI is served.

    Returns:
        ``http://127.0.0.1:5000/#/experiments/<id>/runs?workflowType=machine_learning``.
    """
    return f"{base_url}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


def ui_base_url(tracking_uri: str) -> str:
    """The UI's address for a store: an http(s) server's own, else :data:`UI_BASE_URL`."""
    if tracking_uri.startswith(("http://", "https://")):
        return redact_uri(tracking_uri).rstrip("/")
    return UI_BASE_URL


def mlflow_command() -> str:
    """The ``mlflow`` command that works from the current directory, as a user types it.

    When this Python runs from a virtual environment (``sys.prefix`` differs from
    ``sys.base_prefix``) with an ``mlflow`` script beside it, that script is named, relative
    to the current directory when the environment lies under it (``.venv/bin/mlflow`` from
    the project root) and absolute otherwise: the MLflow on ``PATH``, if any, may be another
    install or version. Outside a virtual environment it is ``mlflow`` when that is on
    ``PATH``, else the script beside this Python when there is one, else ``mlflow``.

    Returns:
        The command, without arguments.
    """
    beside = Path(sys.executable).parent / "mlflow"
    in_venv = sys.prefix != sys.base_prefix
    if beside.is_file() and (in_venv or not shutil.which("mlflow")):
        try:
            return str(beside.absolute().relative_to(Path.cwd()))
        except ValueError:  # not under the current directory
            return str(beside.absolute())
    return "mlflow"


def open_ui_hint(tracking_uri: str, experiment_id: str | None) -> str:
    """The two lines that tell how to open a store's UI on an experiment.

    Args:
        tracking_uri: the store's URI (``sqlite:///...``, ``http://...``).
        experiment_id: the experiment to open; ``None`` opens the default experiment ``0``.

    Returns:
        Two lines, ``Open the UI with: <mlflow> ui --backend-store-uri <uri>`` and
        ``then: <address>``, each indented by two spaces: the command from
        :func:`mlflow_command`, the address from :func:`ui_url`.
        A URI holding a password (which only ``$MLFLOW_TRACKING_URI`` can give:
        ``tracking.uri`` refuses one) is shown as ``"$MLFLOW_TRACKING_URI"``, never spelled out.
    """
    if uri_secret_spans(tracking_uri):
        tracking_uri = '"$MLFLOW_TRACKING_URI"'
    return (
        f"  Open the UI with: {mlflow_command()} ui --backend-store-uri {tracking_uri}\n"
        f"  then: {ui_url(experiment_id or '0')}"
    )
