"""How to open MLflow's UI on a store: the one hint every job and the sweep print."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from locomo_exp.tracking.store import ui_url


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
        :func:`mlflow_command`, the address from :func:`locomo_exp.tracking.store.ui_url`.
    """
    return (
        f"  Open the UI with: {mlflow_command()} ui --backend-store-uri {tracking_uri}\n"
        f"  then: {ui_url(experiment_id or '0')}"
    )
