"""A panel of judges: J per model, the majority verdict, inter-judge agreement, cost.

Every answer is judged by each model of the panel (same prompt, runs and cache). Given
each model's per-question verdicts (0-100, ``None`` = unscored):

* **J per model**: the mean verdict (0-100) over the questions that model scored, and its
  **accept rate** (percent of those questions with a verdict >= the accept threshold).
* **Panel verdict**: majority of accepts (verdict >= the protocol's accept threshold, 50
  for both built-in protocols) among the models that scored the
  question: more accepts -> 100, more rejects -> 0; a tie (e.g. 1-1 with two models, or
  1-1 with the third unscored) or no verdict at all -> unscored, with the reason.
  **Panel J** is the mean panel verdict over scored questions: an accept rate x 100, on the
  scale of the members' accept rates (a rubric member's J is a mean score, not one).
* **Krippendorff's alpha** (K. Krippendorff, *Content Analysis*, 2004; package
  ``krippendorff``) at the protocol's level: nominal on accept/reject (binary), interval
  on the 0-100 scores (rubric); missing verdicts allowed. ``None`` when undefined (fewer
  than two distinct values, or no question scored by two models).
* **Pairwise Cohen's kappa** and raw agreement on accept/reject, for each pair of models,
  over the questions both scored.
* **Cost multiplier**: the panel's judge cost relative to judging with the first model
  alone: the number of models, or, with prices, ``sum(price) / price[first]``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from locomo_exp.stats.agreement import BinaryAgreement, binary_agreement, krippendorff_alpha

logger = logging.getLogger(__name__)


class ProtocolRules(Protocol):
    """What the panel reads of a judge protocol.

    A :class:`~locomo_exp.judge.protocols.ProtocolSpec` has these attributes.
    """

    @property
    def name(self) -> str:
        """The protocol's name (``judge.protocol``)."""
        ...

    @property
    def krippendorff_level(self) -> Literal["interval", "nominal"]:
        """Level of measurement of alpha."""
        ...

    @property
    def accept_threshold(self) -> float:
        """A verdict (0-100) at or above this is an accept."""
        ...


@dataclass(frozen=True)
class PanelResult:
    """The panel's verdicts and agreement.

    Attributes:
        models: the panel's models, in the given order.
        protocol: the judge protocol's name.
        j_per_model: model -> mean verdict on 0-100 over its scored questions (``None``
            if it scored none).
        n_per_model: model -> questions it scored.
        accept_per_model: model -> percent (0-100) of its scored questions it accepts
            (verdict >= the accept threshold), ``None`` if it scored none: the panel J's scale.
        verdicts: question id -> panel verdict (100 accept, 0 reject, ``None`` unscored).
        unscored_reasons: question id -> why the panel has no verdict.
        panel_j: mean panel verdict on 0-100 (``None`` if none scored).
        n_panel_scored: questions with a panel verdict.
        alpha: Krippendorff's alpha (``None`` when undefined).
        alpha_level: ``"nominal"`` or ``"interval"``.
        pairwise: ``(model_a, model_b)`` -> agreement of b with a on accept/reject.
        cost_multiplier: the panel's cost relative to the first model alone.
    """

    models: tuple[str, ...]
    protocol: str
    j_per_model: dict[str, float | None]
    n_per_model: dict[str, int]
    verdicts: dict[str, float | None]
    unscored_reasons: dict[str, str]
    panel_j: float | None
    n_panel_scored: int
    alpha: float | None
    alpha_level: str
    pairwise: dict[tuple[str, str], BinaryAgreement] = field(default_factory=dict)
    cost_multiplier: float = 1.0
    accept_per_model: dict[str, float | None] = field(default_factory=dict)


def panel_cost_multiplier(
    models: Sequence[str], price_per_call: Mapping[str, float] | None = None
) -> float:
    """How many times the cost of judging with the first model alone a panel costs.

    Args:
        models: the panel's models; the first is the reference.
        price_per_call: model -> expected cost of one judge call (any currency unit, e.g.
            USD from ``judge.prices`` and the expected tokens); ``None``: equal prices.

    Returns:
        ``len(models)`` without prices, else ``sum(price) / price[models[0]]``.

    Raises:
        ValueError: for an empty panel, a model without a price, or a non-positive
            price of the first model.
    """
    if not models:
        raise ValueError("judge.panel is empty")
    if price_per_call is None:
        return float(len(models))
    missing = [m for m in models if m not in price_per_call]
    if missing:
        raise ValueError(f"judge.panel: no price for model {missing[0]!r}")
    first = float(price_per_call[models[0]])
    if first <= 0:
        raise ValueError(f"judge.panel: the price of {models[0]!r} must be > 0, got {first}")
    return sum(float(price_per_call[m]) for m in models) / first


def judge_panel(
    verdicts: Mapping[str, Mapping[str, float | None]],
    *,
    protocol: ProtocolRules,
    question_ids: Sequence[str] | None = None,
    price_per_call: Mapping[str, float] | None = None,
    confidence: float = 0.95,
) -> PanelResult:
    """Combine per-model verdicts into a panel (rules in the module doc).

    Args:
        verdicts: model -> (question id -> verdict on 0-100 or ``None``); model order is
            the panel order.
        protocol: the judge protocol (its ``accept_threshold`` and its
            ``krippendorff_level``: nominal compares accept/reject, interval the scores).
        question_ids: the questions, in report order; ``None``: every id any model has,
            in first-seen order.
        price_per_call: model -> cost of one call, for the cost multiplier (optional).
        confidence: level of the Wilson intervals of the pairwise agreement.

    Returns:
        The :class:`PanelResult`.

    Raises:
        ValueError: for fewer than two models.
    """
    models = tuple(verdicts)
    if len(models) < 2:
        raise ValueError(f"judge.panel needs at least two models, got {len(models)}")
    if question_ids is None:
        question_ids = list(dict.fromkeys(q for m in models for q in verdicts[m]))
    matrix = np.full((len(models), len(question_ids)), np.nan)
    for i, model in enumerate(models):
        for j, qid in enumerate(question_ids):
            value = verdicts[model].get(qid)
            if value is not None:
                matrix[i, j] = float(value)
    scored = ~np.isnan(matrix)
    j_per_model = {
        m: (float(np.mean(matrix[i][scored[i]])) if scored[i].any() else None)
        for i, m in enumerate(models)
    }
    n_per_model = {m: int(scored[i].sum()) for i, m in enumerate(models)}

    accepts = np.where(scored, matrix >= protocol.accept_threshold, False)
    accept_per_model = {
        m: (100.0 * float(accepts[i][scored[i]].mean()) if scored[i].any() else None)
        for i, m in enumerate(models)
    }
    panel: dict[str, float | None] = {}
    reasons: dict[str, str] = {}
    for j, qid in enumerate(question_ids):
        yes = int(accepts[:, j].sum())
        no = int(scored[:, j].sum()) - yes
        if yes > no:
            panel[qid] = 100.0
        elif no > yes:
            panel[qid] = 0.0
        else:
            panel[qid] = None
            missing = len(models) - yes - no
            reasons[qid] = (
                "no judge of the panel gave a verdict"
                if yes + no == 0
                else f"tie: {yes} accept, {no} reject"
                + (f", {missing} without a verdict" if missing else "")
            )
    given = [v for v in panel.values() if v is not None]

    level = protocol.krippendorff_level
    data = np.where(scored, accepts.astype(float), np.nan) if level == "nominal" else matrix
    pairwise: dict[tuple[str, str], BinaryAgreement] = {}
    for (a, ia), (b, ib) in itertools.combinations([(m, i) for i, m in enumerate(models)], 2):
        both = scored[ia] & scored[ib]
        if both.any():
            pairwise[(a, b)] = binary_agreement(accepts[ia][both], accepts[ib][both], confidence)
    if reasons:
        logger.info("judge panel: %d question(s) without a panel verdict", len(reasons))
    return PanelResult(
        models=models,
        protocol=protocol.name,
        j_per_model=j_per_model,
        n_per_model=n_per_model,
        verdicts=panel,
        unscored_reasons=reasons,
        panel_j=float(np.mean(given)) if given else None,
        n_panel_scored=len(given),
        alpha=krippendorff_alpha(data, level),
        alpha_level=level,
        pairwise=pairwise,
        cost_multiplier=panel_cost_multiplier(models, price_per_call),
        accept_per_model=accept_per_model,
    )
