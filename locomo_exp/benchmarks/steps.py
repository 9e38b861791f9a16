"""The hooks a benchmark gives the one job pipeline (:func:`.pipeline.run_job`).

A benchmark package subclasses :class:`JobSteps` and fills in only what is its own: its
settings check, its reader, its judge records and judge call, its summary, score rows,
renderers and MLflow names. The pipeline does everything else the same way for every
benchmark: the refusals before anything is written or paid, the spend cap, the judge cache
(resume, re-runs), batch and dry run (the judge engine's), the swap of an overwritten run,
the MLflow run. See docs/development.md, "Adding a benchmark".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.judge.prompt_book import PromptBook
    from locomo_exp.judge.spend import JobSpend, Part
    from locomo_exp.llm.cache import JudgeCache
    from locomo_exp.llm.messages import JudgeClient
    from locomo_exp.llm.stop import CallsStop
    from locomo_exp.results import QARecord
    from locomo_exp.results.questions import QuestionRow

InputT = TypeVar("InputT")
"""The benchmark's read input (its own typed rows)."""
JudgedT = TypeVar("JudgedT")
"""What the benchmark's judge hook returns (its own type)."""


@dataclass(frozen=True)
class JobContext:
    """Where and how one job runs: what every hook may need besides the input.

    Attributes:
        cfg: the typed config.
        output_dir: the run directory (absolute).
        start_dir: the directory relative paths are resolved against (absolute).
        data_path: the one input file.
        client: a judge client to use instead of the provider's SDK (tests), or ``None``.
        calls_stop: set by another thread to stop paying (completed calls stay cached).
        spend: the job's ``judge.max_cost_usd`` plan over all its parts, or ``None``.
        data_paths: every input file (several when ``data.runs`` or a glob pools them;
            ``data_path`` is the first).
        on_calls_start: called once right before the judge's first call (a recorded job's
            deferred MLflow run starts then, :mod:`.pipeline_recorded`), or ``None``.
        prompts: the judge prompts the preflight built for its checks, for the judge
            hook to hand to :func:`~locomo_exp.judge.run_judge` (``prompts=``) so each is
            built once per job; ``None`` without a judge.
        cache: the judge cache the preflight opened and probed (an existing file), for
            the judge hook to hand to :func:`~locomo_exp.judge.run_judge` (``cache=``) so
            the file is opened and probed once per job; ``None``: no file yet, no cache
            or no judge (``run_judge`` opens it then). :func:`.pipeline.run_job` closes it.
    """

    cfg: ExperimentConfig
    output_dir: Path
    start_dir: Path
    data_path: Path
    client: JudgeClient | None = None
    calls_stop: CallsStop | None = None
    spend: JobSpend | None = None
    data_paths: tuple[Path, ...] = ()
    on_calls_start: Callable[[], object] | None = None
    prompts: PromptBook | None = None
    cache: JudgeCache | None = None


@dataclass
class JobResult:
    """What one benchmark job produced (every pipeline benchmark returns this type).

    Attributes:
        output_dir: where the outputs are.
        summary: the content of ``summary.json`` (built once: the run log).
        metrics: the MLflow metrics.
        files: the output files written (their final paths).
        console: the lines the command line prints.
        run_id: the MLflow run id, or ``None`` with ``tracking=none``.
        tracking_uri: the MLflow store, or ``None``.
        exit_status: 1 when a gate the user set failed after the outputs were written
            (the last console line says which, ``error: ...``); else 0.
        experiment_id: the MLflow experiment id, or ``None`` (set by a recorded job).
        typed_summary: the benchmark's own typed summary when it has one (LoCoMo's
            ``RunSummary``), else ``None``.
    """

    output_dir: Path
    summary: dict[str, Any]
    metrics: dict[str, float]
    files: list[Path] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    run_id: str | None = None
    tracking_uri: str | None = None
    exit_status: int = 0
    experiment_id: str | None = None
    typed_summary: Any = None


@dataclass
class Written:
    """What a recorded job's :meth:`JobSteps.write` wrote (:mod:`.pipeline_recorded`).

    Attributes:
        summary: the content of ``summary.json``.
        files: the paths written (in ``write_dir``).
        rows: the ``scores.jsonl`` rows.
        questions: the question rows (``questions.html``, MLflow traces).
        typed_summary: the benchmark's typed summary, or ``None``.
    """

    summary: dict[str, Any]
    files: list[Path]
    rows: list[dict[str, Any]]
    questions: list[QuestionRow] = field(default_factory=list)
    typed_summary: Any = None


@dataclass(frozen=True)
class JobPlan(Generic[InputT]):
    """What :func:`preflight` found: the job can run, nothing written or paid yet.

    Attributes:
        ctx: where and how the job runs (the spend plan included).
        inp: the read and validated input.
        judge: the judge settings, or ``None`` (no judge call).
        replacing: whether an earlier finished run is replaced (``overwrite=true``).
    """

    ctx: JobContext
    inp: InputT
    judge: JudgeConfig | None
    replacing: bool


class JobSteps(Generic[InputT, JudgedT]):
    """One benchmark's hooks; the defaults are those of a benchmark with nothing special.

    Every hook that can refuse raises :class:`ValueError` (``DataValidationError``
    included) with one line naming the file, the record and the field, and is called
    before anything is written, deleted or paid.

    Args:
        name: the benchmark's registry key (``tinybench``): the default MLflow run name is
            ``<file stem> · <name>``.
        noun: what its ``data.path`` holds, for the one-file refusal (``answers file``).
        title: the benchmark's name in messages (``TinyBench``).
    """

    round_money = False
    """Whether ``summary.json`` and ``card.json`` are saved with costs rounded as money."""

    records_first = False
    """A recorded job (:mod:`.pipeline_recorded`): its MLflow run starts with the job (set
    up on a thread while a judge's calls wait), a record of what is computed is written
    before the judge is paid (:meth:`before_judge`), a judge that fails or leaves a batch
    pending is recorded (:meth:`judge_failed`), and :meth:`write` and :meth:`track` replace
    :func:`.pipeline.write_files` and the plug-in MLflow logging. LoCoMo's job is one."""

    def __init__(self, name: str, title: str, noun: str) -> None:
        self.name, self.title, self.noun = name, title, noun

    # -- preflight -----------------------------------------------------------------------
    def check_settings(self, cfg: ExperimentConfig) -> None:
        """Refuse settings this benchmark cannot honour (one line). Default: none."""

    def input_paths(self, cfg: ExperimentConfig, start_dir: Path) -> list[Path]:
        """The job's input files, each checked to be a readable regular file (never opened).

        Default: the one ``data.path`` file. A benchmark that pools several files
        (``data.runs``, a glob) or reads a side file (an errata file) checks them here.

        Raises:
            ValueError: no file, or more than one (one line); ``DataValidationError`` for
                a missing or unreadable file.
        """
        from locomo_exp.benchmarks.file_plugin import single_data_file
        from locomo_exp.data.input_file import check_regular_file

        path = single_data_file(cfg, start_dir)
        if path is None:
            raise ValueError(f"a {self.title} run scores one {self.noun}: give one data.path")
        check_regular_file(path)
        return [path]

    def source(self, inp: InputT, path: Path) -> str:
        """The input as a refusal line names it. Default: the file's path."""
        return str(path)

    def plan_trust(self, inp: InputT, judge: JudgeConfig, start_dir: Path, source: str
                   ) -> InputT:
        """Plan the judge's trust checks (controls, labels, panel) before any write or call.

        Called after the judge's checks on the records and before :meth:`spend_parts`;
        returns the input with the plan. Default: nothing to plan (the input as it is).

        Raises:
            ValueError, JudgeError: a control file, label file or panel setting that
                cannot be used (one line).
        """
        return inp

    def judge_config(self, cfg: ExperimentConfig) -> JudgeConfig | None:
        """The judge settings of a judged job, or ``None`` when no judge call is made.

        Default: ``cfg.judge`` with ``scorer=judge``/``both``, else ``None``.

        Raises:
            ValueError: a judge protocol the benchmark cannot use (one line).
        """
        return cfg.judge if cfg.scorer.uses_judge else None

    def read(self, cfg: ExperimentConfig, path: Path, start_dir: Path, *, judging: bool
             ) -> InputT:
        """Read and validate the input file.

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def judge_records(self, inp: InputT, judge: JudgeConfig) -> list[QARecord]:
        """The records the judge is asked about (one per judged unit), for the preflight.

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def spend_parts(self, inp: InputT, judge: JudgeConfig, cfg: ExperimentConfig
                    ) -> list[Part]:
        """Every part of the job's judge calls, in order, for ``judge.max_cost_usd``.

        Default: one part, :meth:`judge_records` under ``judge``.
        """
        return [("item", self.judge_records(inp, judge), judge)]

    # -- judge, trust --------------------------------------------------------------------
    def judge(self, inp: InputT, judge: JudgeConfig, ctx: JobContext) -> JudgedT:
        """Judge the input (or price it: ``judge.dry_run``); every call goes through the cache.

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def trust(self, inp: InputT, judged: JudgedT, ctx: JobContext) -> JudgedT:
        """Check the judge (an audit, labels) after it ran. Default: nothing to check."""
        return judged

    # -- the run log and its writers ------------------------------------------------------
    def summary(self, inp: InputT, judged: JudgedT | None, cfg: ExperimentConfig
                ) -> dict[str, Any]:
        """The run log (``summary.json``), built once from the input and the judge's result.

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def score_rows(self, inp: InputT, judged: JudgedT | None) -> list[dict[str, Any]]:
        """The ``scores.jsonl`` rows, one per question or unit.

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def question_rows(self, rows: list[dict[str, Any]], judge_model: str | None
                      ) -> list[QuestionRow]:
        """The ``scores.jsonl`` rows as benchmark-neutral question rows.

        They make ``questions.html`` and, with ``tracking.questions=true``, the MLflow
        traces. Default: none (no page, no trace).

        Args:
            rows: the rows :meth:`score_rows` gave.
            judge_model: this project's judge model when it ran, else ``None``.
        """
        return []

    def card(self, summary: dict[str, Any]) -> dict[str, Any]:
        """``card.json`` (the run's headline figures and provenance) from the summary.

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def report(self, summary: dict[str, Any], card: dict[str, Any]) -> str:
        """``report.md``, a pure function of the summary and the card.

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def console(self, summary: dict[str, Any]) -> list[str]:
        """The figures the command line prints (before where the outputs are).

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def gate(self, summary: dict[str, Any]) -> str | None:
        """A failed gate the user set (exit status 1, outputs kept), or ``None``."""
        return None

    def paired_scores(self, rows: list[dict[str, Any]]
                      ) -> dict[str, tuple[str, float | None]]:
        """Each ``scores.jsonl`` row's key, group and score (0-1, ``None`` unscored).

        Declared by a benchmark without its own ``mode=compare`` and sweep table: the
        pipeline's comparison pairs two runs by these keys
        (:mod:`locomo_exp.benchmarks.pipeline_compare`).

        Raises:
            NotImplementedError: the benchmark compares its runs its own way (or not at all).
        """
        raise NotImplementedError

    # -- a recorded job (records_first) ------------------------------------------------------
    def start_tags(self, ctx: JobContext) -> dict[str, str]:
        """A recorded job's MLflow tags when its run starts. Default: ``benchmark``."""
        return {"benchmark": self.name}

    def start_params(self, ctx: JobContext, swept_keys: Sequence[str]) -> dict[str, str]:
        """A recorded job's MLflow params when its run starts (a sweep's keys included).

        Default: none.
        """
        return {}

    def run_name(self, ctx: JobContext) -> str:
        """The MLflow run name when none is given. Default: ``<file stem> · <name>``."""
        return ctx.cfg.tracking.run_name or f"{ctx.data_path.stem} · {self.name}"

    def before_judge(self, inp: InputT, ctx: JobContext, write_dir: Path) -> InputT:
        """Compute what needs no judge and write it, before any call is paid.

        Default: nothing (the input as it is).

        Raises:
            OSError: a file cannot be written.
        """
        return inp

    def judge_failed(self, inp: InputT, error: BaseException, ctx: JobContext,
                     write_dir: Path) -> InputT:
        """Record that the judge did not finish (``error``: why); must never raise.

        Returns:
            The input with what was recorded. Default: nothing recorded (the input).
        """
        return inp

    def write(self, inp: InputT, judged: JudgedT | None, ctx: JobContext, write_dir: Path
              ) -> Written:
        """A recorded job's outputs, written into ``write_dir``.

        Raises:
            NotImplementedError: a recorded benchmark gives it.
        """
        raise NotImplementedError

    def written_metrics(self, written: Written, ctx: JobContext) -> dict[str, float]:
        """A recorded job's MLflow metrics. Default: :meth:`run_metrics` of its summary."""
        return self.run_metrics(written.summary)

    def track(self, written: Written, metrics: dict[str, float], ctx: JobContext,
              logged: dict[str, str], judged: JudgedT | None, run: Any) -> None:
        """Log a recorded job's outputs to its (active) MLflow run.

        Args:
            written: what :meth:`write` wrote.
            metrics: :meth:`written_metrics`.
            ctx: the job's context.
            logged: the params logged when the run started (never logged twice).
            judged: the judge's result, or ``None``.
            run: the active MLflow run.

        Raises:
            NotImplementedError: a recorded benchmark gives it.
        """
        raise NotImplementedError

    def recorded_console(self, written: Written, ctx: JobContext) -> list[str]:
        """A recorded job's figures, as the command line prints them, before :func:`where_lines`.

        Worded once the outputs are in ``ctx.output_dir``. Default: :meth:`console` of its summary.
        """
        return self.console(written.summary)

    def failure(self, judged: JudgedT | None, written: Written, ctx: JobContext, where: str
                ) -> Exception | None:
        """A recorded job's judge result that fails the job once its outputs are logged.

        Args:
            judged: the judge's result, or ``None``.
            written: what :meth:`write` wrote.
            ctx: the job's context (its spend plan: what was paid is attached).
            where: where the outputs are, in words.

        Returns:
            The error to raise, or ``None``. Default: ``None``.
        """
        return None

    # -- MLflow -------------------------------------------------------------------------
    def run_tags(self, summary: dict[str, Any]) -> dict[str, str]:
        """The MLflow run's tags at its start. Default: ``benchmark``."""
        return {"benchmark": self.name}

    def run_params(self, summary: dict[str, Any]) -> dict[str, str]:
        """The MLflow params (names as :mod:`locomo_exp.tracking` rules them).

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def run_metrics(self, summary: dict[str, Any]) -> dict[str, float]:
        """The MLflow metrics (names as :mod:`locomo_exp.tracking` rules them).

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def end_tags(self, summary: dict[str, Any], console: list[str]) -> dict[str, str]:
        """Tags set once the files are written. Default: the summary's warnings, if any."""
        from locomo_exp import tracking

        return tracking.warning_tags(summary.get("warnings") or ())


def where_lines(output_dir: Path, *, run_id: str | None, experiment: str,
                tracking_uri: str | None, experiment_id: str | None) -> list[str]:
    """The console's last lines, the same for every benchmark: the report and the MLflow run.

    Args:
        output_dir: the run directory (its ``report.md`` is named).
        run_id: the MLflow run, or ``None`` (tracking off: no MLflow lines).
        experiment: the MLflow experiment's name.
        tracking_uri: the store, or ``None``.
        experiment_id: the experiment's id (the UI hint opens it), or ``None``.

    Returns:
        ``""``, ``Report: <path>``, then ``MLflow: run <id> in experiment '<name>'.`` with
        how to open the UI (one string of lines), when the job logged a run.
    """
    lines = ["", f"Report: {output_dir / 'report.md'}"]
    if run_id is not None and tracking_uri is not None:
        from locomo_exp import tracking

        lines.append(f"MLflow: run {run_id} in experiment '{experiment}'.\n"
                     f"{tracking.open_ui_hint(tracking_uri, experiment_id)}")
    return lines


__all__ = ["InputT", "JobContext", "JobPlan", "JobResult", "JobSteps", "JudgedT", "Written",
           "where_lines"]
