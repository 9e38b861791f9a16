"""Statistics for judging and comparing runs: thin wrappers over scipy/statsmodels.

Modules: ``bootstrap`` (question-level and conversation-cluster bootstrap), ``paired``
(McNemar, sign-flip permutation, Holm, minimum detectable difference), ``agreement``
(Cohen's kappa, Wilson intervals, sensitivity/specificity), ``correction`` (Rogan-Gladen).
"""
