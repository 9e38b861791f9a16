"""LoCoMo, the default benchmark: registered last (:data:`.plugin.PLUGIN`), a recorded job.

Its facts stay in :mod:`locomo_exp.benchmark` (the foundations every layer reads) and its
layouts in :mod:`locomo_exp.data` (other code detects and reads them); this package holds
its plug-in (:mod:`.plugin`: what no earlier benchmark claims), its job's hooks
(:mod:`.steps`), their types, its console and its MLflow logging. See docs/development.md.
"""

from locomo_exp.benchmarks.locomo.plugin import PLUGIN

__all__ = ["PLUGIN"]
