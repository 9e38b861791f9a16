"""Judge trust: how far to trust this run's J.

Modules: ``controls`` (audit controls with known verdicts, built from the input's own
questions), ``audit`` (the judged controls' rates and the gate), ``perturb`` (the
deterministic perturbation rules), ``labels`` (agreement with human labels and with stored
verdicts), ``panel`` (several judges: majority verdict, Krippendorff's alpha, pairwise kappa)
and ``report`` (Markdown sections and MLflow numbers). The corrected J lives in
:mod:`locomo_exp.stats.correction`.
"""
