"""locomo_exp: score long-term conversational-memory systems on LoCoMo.

Token F1 reproducing LoCoMo's official scorer, an LLM-as-a-Judge J-score with Claude,
markdown reports and MLflow tracking, driven by Hydra configs.
"""

__version__ = "0.1.0"
