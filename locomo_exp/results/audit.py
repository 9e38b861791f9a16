"""The judged audit, as ``summary.json`` -> judge -> trust -> audit holds it.

Control answers with a known verdict, judged like the real answers (never part of J): per
kind accept and error rates with Wilson intervals, per category, the gate against
``judge.audit.max_false_accept`` / ``max_false_reject``. Shares 0-1, verdicts 0-100, USD.
Re-exported by :mod:`locomo_exp.results`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.results.agreement import Rate, by_category_json
from locomo_exp.results.convert import opt_float

GATE_STATES = ("passed", "failed", "not set", "not measured")
"""The audit gate's states: measured and within the limits; a limit exceeded or a checked kind
without a verdict; no limit asked for; limits asked for but nothing measured."""


@dataclass(frozen=True)
class AuditKindResult:
    """The audit's controls of one kind.

    Attributes:
        kind: control kind (``gold_as_answer``, ``other_gold``, ...).
        expected_accept: whether a control of this kind should be accepted.
        n_controls: controls judged.
        n_unscored: controls without a verdict.
        accept: accepted among the scored controls.
        error: false rejects (accept kinds) or false accepts (reject kinds).
        per_category: accept rate per LoCoMo category id.
        cost_usd: cost of this kind's judge calls (USD), or ``None`` without a price.
        notes: ``(note, number of controls)`` pairs (e.g. controls of a kind that could not
            be built as asked).
    """

    kind: str
    expected_accept: bool
    n_controls: int
    n_unscored: int
    accept: Rate
    error: Rate
    per_category: dict[int, Rate] = field(default_factory=dict)
    cost_usd: float | None = None
    notes: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (category ids as strings, notes as ``[note, count]`` pairs)."""
        return {
            "expected_accept": self.expected_accept,
            "n_controls": self.n_controls,
            "n_unscored": self.n_unscored,
            "accept": self.accept.to_json(),
            "error": self.error.to_json(),
            "per_category": by_category_json(self.per_category),
            "cost_usd": self.cost_usd,
            "notes": [[note, count] for note, count in self.notes],
        }

    @classmethod
    def from_json(cls, kind: str, data: Mapping[str, Any]) -> AuditKindResult:
        """Inverse of :meth:`to_json`; ``kind`` is the entry's key."""
        return cls(
            kind=kind,
            expected_accept=bool(data["expected_accept"]),
            n_controls=int(data.get("n_controls") or 0),
            n_unscored=int(data.get("n_unscored") or 0),
            accept=Rate.from_json(data["accept"]),
            error=Rate.from_json(data["error"]),
            per_category={
                int(c): Rate.from_json(r) for c, r in (data.get("per_category") or {}).items()
            },
            cost_usd=opt_float(data.get("cost_usd")),
            notes=tuple((str(note), int(count)) for note, count in data.get("notes") or ()),
        )


@dataclass(frozen=True)
class GateResult:
    """The audit gate: the per-kind error rates checked against the limits asked for.

    Made by :mod:`locomo_exp.trust.audit` (``max_false_accept`` / ``max_false_reject``) and
    read back from summary.json.

    Attributes:
        state: one of :data:`GATE_STATES`: ``"passed"`` (every checked kind was measured
            and is within its limit), ``"failed"`` (a measured kind exceeds its limit, or
            a checked kind got no verdict), ``"not set"`` (no limit asked for),
            ``"not measured"`` (limits asked for, but no checked kind got a verdict).
        failures: one phrase per failing (or unmeasured) kind.
        message: one line for the log and the console (``""`` unless the gate fails).
    """

    state: str
    failures: tuple[str, ...] = ()
    message: str = ""

    @property
    def passed(self) -> bool:
        """``True`` only when something was measured and nothing exceeded its limit."""
        return self.state == "passed"

    @property
    def fails_run(self) -> bool:
        """``True`` when the run must fail: a limit exceeded or not measured."""
        return self.state in ("failed", "not measured")

    def to_json(self) -> dict[str, Any]:
        """``{"state", "passed", "failures", "message"}`` (``passed`` for readers of JSON)."""
        return {
            "state": self.state,
            "passed": self.passed,
            "failures": list(self.failures),
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GateResult:
        """Inverse of :meth:`to_json`.

        Raises:
            ValueError: for a state not in :data:`GATE_STATES`.
        """
        state = str(data["state"])
        if state not in GATE_STATES:
            raise ValueError(f"audit gate state {state!r} is not one of {', '.join(GATE_STATES)}")
        return cls(
            state=state,
            failures=tuple(str(f) for f in data.get("failures") or ()),
            message=str(data.get("message") or ""),
        )


@dataclass(frozen=True)
class AuditResult:
    """The judged audit: control answers with a known verdict (never part of J).

    Attributes:
        controls: controls judged.
        calls_made: judge calls the audit paid for.
        cache_hits: audit runs answered from the judge cache.
        runs_total: audit runs (controls x runs per control).
        estimated_cost_usd: cost of the audit's calls (USD), or ``None`` without a price.
        threshold: verdict (0-100) at or above which a control counts as accepted.
        kinds: per control kind, in control order.
        false_accept: accepted over all should-be-rejected controls.
        false_reject: rejected over all should-be-accepted controls.
        gate: the gate.
        max_false_accept: the limit per reject kind (0-1), or ``None``.
        max_false_reject: the limit per accept kind (0-1), or ``None``.
        cost_usd: sum of the kinds' costs (USD), or ``None`` without a price.
        j_inflated: the "J inflated (...)" warnings of the audit joined by ``"; "`` (a
            reject kind's false-accept interval, or the reject kinds' pooled one, lies
            wholly above the benchmark's limit, :mod:`locomo_exp.trust.checks`), or ``None``.
        verdicts: control id -> its mean verdict (0-100), ``None`` when unscored.
        j_deflated: the "J deflated (...)" warnings (the gold's false-reject interval lies
            wholly above the limit), or ``None``.
        checks: the pooled checks' verdicts in words: ``false_accept`` and
            ``false_reject`` -> ``"J inflated"``, ``"not inflated: ..."``, ``"not measured
            (n too small: ...)"``...
    """

    controls: int
    calls_made: int
    cache_hits: int
    runs_total: int
    estimated_cost_usd: float | None
    threshold: float
    kinds: dict[str, AuditKindResult]
    false_accept: Rate
    false_reject: Rate
    gate: GateResult
    max_false_accept: float | None = None
    max_false_reject: float | None = None
    cost_usd: float | None = None
    j_inflated: str | None = None
    verdicts: dict[str, float | None] = field(default_factory=dict)
    j_deflated: str | None = None
    checks: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (layout in ``docs/trust.md``)."""
        return {
            "controls": self.controls,
            "calls_made": self.calls_made,
            "cache_hits": self.cache_hits,
            "runs_total": self.runs_total,
            "estimated_cost_usd": self.estimated_cost_usd,
            "threshold": self.threshold,
            "gate": self.gate.to_json(),
            "max_false_accept": self.max_false_accept,
            "max_false_reject": self.max_false_reject,
            "false_accept": self.false_accept.to_json(),
            "false_reject": self.false_reject.to_json(),
            "kinds": {name: kind.to_json() for name, kind in self.kinds.items()},
            "cost_usd": self.cost_usd,
            "j_inflated": self.j_inflated,
            "j_deflated": self.j_deflated,
            "checks": dict(self.checks),
            "verdicts": dict(self.verdicts),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AuditResult:
        """Inverse of :meth:`to_json`."""
        return cls(
            controls=int(data.get("controls") or 0),
            calls_made=int(data.get("calls_made") or 0),
            cache_hits=int(data.get("cache_hits") or 0),
            runs_total=int(data.get("runs_total") or 0),
            estimated_cost_usd=opt_float(data.get("estimated_cost_usd")),
            threshold=float(data["threshold"]),
            kinds={
                str(k): AuditKindResult.from_json(str(k), v)
                for k, v in (data.get("kinds") or {}).items()
            },
            false_accept=Rate.from_json(data["false_accept"]),
            false_reject=Rate.from_json(data["false_reject"]),
            gate=GateResult.from_json(data["gate"]),
            max_false_accept=opt_float(data.get("max_false_accept")),
            max_false_reject=opt_float(data.get("max_false_reject")),
            cost_usd=opt_float(data.get("cost_usd")),
            j_inflated=None if data.get("j_inflated") is None else str(data["j_inflated"]),
            verdicts={str(k): opt_float(v) for k, v in (data.get("verdicts") or {}).items()},
            j_deflated=None if data.get("j_deflated") is None else str(data["j_deflated"]),
            checks={str(k): str(v) for k, v in (data.get("checks") or {}).items()},
        )
