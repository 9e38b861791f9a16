"""tinybench: a benchmark invented for the contract suite, added as one package.

Its layout: ``{"tinybench": [{"id", "kind", "question", "answer", "prediction",
"verdict"?}, ...]}``; two kinds of question (``recall``, ``update``); a stored ``verdict``
(true/false) is scored with no judge call, ``scorer=judge`` asks the registered ``binary``
protocol. Its job, sweep job, judged runs, dry run, batch, resume, swap of an overwritten
run and MLflow run are the pipeline's: the package gives only its hooks (:mod:`.steps`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin
from locomo_exp.benchmarks.steps import JobSteps


class TinyPlugin(PipelinePlugin):
    """tinybench's plug-in: its detection and its hooks."""

    def detects(self, path: Path) -> bool:
        """A JSON object whose first key is ``tinybench``."""
        with path.open("rb") as handle:
            return handle.read(16).startswith(b'{"tinybench"')

    def steps(self) -> JobSteps[Any, Any]:
        """The pipeline's hooks (:data:`.steps.STEPS`)."""
        from tinybench.steps import STEPS

        return STEPS


PLUGIN = TinyPlugin("tinybench", "TinyBench")
