"""Published BEAM figures, each with the profile and the judge that produced it.

mem0 Platform on BEAM's 10M tier (200 questions), as printed in mem0ai/memory-benchmarks
README.md, "Results -> Mem0 Platform -> BEAM" (the "BEAM 10M (200 questions)" row and the
"BEAM 10M (Top 200)" table; the same at edcd6f1d, c3c65d2f and 4b61c5d3). Figures are as
printed: pass rate in percent with 1 decimal, average scores with 3 decimals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from locomo_exp.benchmarks.beam.profiles import NUGGET


@dataclass(frozen=True)
class BeamBaseline:
    """One published BEAM run.

    Attributes:
        name: the system and tier (``mem0 Platform, 10M``).
        profile: the scoring profile of its figures.
        judge: the judge model of its item verdicts.
        source: where the figures are printed.
        n: questions.
        passes: overall passes.
        pass_rate: overall pass rate, percent, as printed.
        avg_score: overall average score, as printed.
        abilities: ability -> (average score as printed, passes, questions).
    """

    name: str
    profile: str
    judge: str
    source: str
    n: int
    passes: int
    pass_rate: float
    avg_score: float
    abilities: dict[str, tuple[float, int, int]] = field(default_factory=dict)

    def comparable(self, profile: str, judge: str | None) -> str | None:
        """``None`` when a run's figures compare with these, else why they do not."""
        reasons = []
        if profile != self.profile:
            reasons.append(f"profile {profile} vs {self.profile}")
        if judge != self.judge:
            reasons.append(f"judge {judge or 'unknown'} vs {self.judge}")
        return "; ".join(reasons) or None


MEM0_PLATFORM_10M = BeamBaseline(
    name="mem0 Platform, 10M tier (top 200)",
    profile=NUGGET,
    judge="gpt-5",
    source="mem0ai/memory-benchmarks README.md, Results / Mem0 Platform / BEAM",
    n=200,
    passes=101,
    pass_rate=50.5,
    avg_score=0.486,
    abilities={
        "abstention": (0.400, 8, 20),
        "contradiction_resolution": (0.325, 5, 20),
        "event_ordering": (0.202, 3, 20),
        "information_extraction": (0.562, 11, 20),
        "instruction_following": (0.825, 18, 20),
        "knowledge_update": (0.750, 16, 20),
        "multi_session_reasoning": (0.261, 6, 20),
        "preference_following": (0.904, 19, 20),
        "summarization": (0.469, 11, 20),
        "temporal_reasoning": (0.163, 4, 20),
    },
)

BEAM_BASELINES: tuple[BeamBaseline, ...] = (MEM0_PLATFORM_10M,)
"""Every published BEAM run the report shows."""

__all__ = ["BEAM_BASELINES", "MEM0_PLATFORM_10M", "BeamBaseline"]
