"""Published LongMemEval figures whose source and judge can be named.

Only figures traced to a file at a named commit are listed (the shared data README,
``../shared/data/longmemeval/README.md``, records both); none is better than a wrong one. Each
was judged by the model named, with LongMemEval's own ``evaluate_qa.py`` prompts: compare a
run with them only when it used the same judge and dataset variant.
"""

from __future__ import annotations

from typing import Any

LME_BASELINES: tuple[dict[str, Any], ...] = (
    {
        "system": "memory-agents (oracle run)",
        "overall": 0.724,
        "task_avg": None,
        "judge": "gpt-4o-2024-08-06",
        "variant": "oracle",
        "source": (
            "Memory-Agents/memory-agents @ aaf3a298: memory_agents/longmemeval/"
            "my_predictions.jsonl.Results_Summary.txt"
        ),
    },
    {
        "system": "Llama-3.1-8B chain-of-note, full history (Hunk0724 fork, oracle)",
        "overall": 0.62,
        "task_avg": 0.6596,
        "judge": "gpt-4o-mini-2024-07-18",
        "variant": "oracle",
        "source": (
            "Hunk0724/LongMemEval @ 6dc5c817: analysis_results/oracle_fullhistory_con/"
            "analysis_report.md"
        ),
    },
)
"""Published figures on 0-1, with the judge that produced them and their source."""

__all__ = ["LME_BASELINES"]
