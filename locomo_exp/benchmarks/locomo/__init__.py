"""LoCoMo's job on the one pipeline: :class:`~.steps.LocomoSteps` (a recorded job).

LoCoMo is the default benchmark, not a registered plug-in: its facts stay in
:mod:`locomo_exp.benchmark` (the foundations every layer reads) and its layouts in
:mod:`locomo_exp.data`; this package holds only its job's hooks, which need the engines,
outputs and tracking. See docs/development.md ("Architecture").
"""
