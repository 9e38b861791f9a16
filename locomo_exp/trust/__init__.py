"""Judge trust: how far to trust this run's J.

Modules: ``controls`` (audit controls with known verdicts, built from the input's own
questions), ``audit`` (the judged controls' rates and the gate), ``perturb`` (the
deterministic perturbation rules), ``budget`` (how many controls the audit may judge),
``labels`` (agreement with human labels and with stored verdicts), ``panel`` (several judges:
majority verdict, Krippendorff's alpha, pairwise kappa), ``plan`` (options checked and calls
counted before any call), ``job`` (the calls, returning a
:class:`~locomo_exp.results.TrustSummary`) and ``summary`` (the engines' results as that
summary's typed parts). The corrected J lives in :mod:`locomo_exp.stats.correction`; the
Markdown sections in :mod:`locomo_exp.report.trust`, the MLflow names in
:mod:`locomo_exp.tracking.trust`.
"""
