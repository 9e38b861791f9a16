"""The record every scorer works on: one answered question, as read from a results file."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QARecord:
    """One answered LoCoMo question, as read from a results file.

    Attributes:
        question_id: unique id within the file (given, or ``<conversation>:<index>``).
        question: the question text.
        ground_truth: the gold answer as text (JSON ints are turned into ``str(int)`` as
            LoCoMo's scorer does; several golds joined by ``" | "``); ``None`` only for
            records built outside :func:`locomo_exp.data.load_results`, which excludes
            questions without a gold.
        prediction: the system's answer ("" when the file has null).
        category: LoCoMo category id, 1-5.
        conversation_id: the conversation (LoCoMo sample) the question belongs to.
        evidence: dialogue ids supporting the answer (e.g. ``"D1:3"``), when given.
        adversarial_answer: category-5 distractor answer, when given.
        search_latency_s: memory search latency in seconds, when given.
        total_latency_s: end-to-end answer latency in seconds, when given.
        context_tokens: tokens of retrieved memory put in the answer prompt, when given.
        stored_judge_score: a verdict stored in the file by another judge, on 0-100
            (``True``/1 -> 100), when given; not produced by this project's judge. With
            several stored verdicts, their mean.
        stored_judgments: every stored verdict of the question on 0-100, in run order
            (one for a single verdict; ``judgment_1..N`` for several); empty when none.
        position: 0-based index of the record in the file (in reading order).
        references: every gold reference when the file gives a list of golds (scored as the
            best match over them, as SQuAD does); empty means the single ``gold_text``.
        prediction_missing: the file's prediction was ``null``, NaN or infinite (scored 0).
        question_type: a plug-in benchmark's own kind of question (its string key),
            ``None`` for LoCoMo; a judge template's ``by_kind`` reads it.
        kind: the criterion a plug-in benchmark judges the question by, as its string key
            when it differs from ``question_type`` (a sub-kind such as an abstention
            question of any type); a template's ``by_kind`` tries it first. ``None``: none.
    """

    question_id: str
    question: str
    ground_truth: str | None
    prediction: str
    category: int
    conversation_id: str | None = None
    evidence: tuple[str, ...] = ()
    adversarial_answer: str | None = None
    search_latency_s: float | None = None
    total_latency_s: float | None = None
    context_tokens: int | None = None
    stored_judge_score: float | None = None
    position: int = 0
    references: tuple[str, ...] = ()
    prediction_missing: bool = False
    stored_judgments: tuple[float, ...] = ()
    question_type: str | None = None
    kind: str | None = None

    @property
    def gold_references(self) -> tuple[str, ...]:
        """The gold references scored against: ``references``, else ``(gold_text,)``."""
        return self.references or (self.gold_text,)

    @property
    def gold_text(self) -> str:
        """The gold answer as LoCoMo's scorer sees it: ``str(answer)``.

        A null gold is ``""``, never the text ``"None"``: :func:`locomo_exp.data.load_results`
        excludes such questions, and a record built elsewhere with ``None`` scores 0.
        """
        return "" if self.ground_truth is None else str(self.ground_truth)
