"""Several files as one result: pooled files (``data.path`` list or glob) and runs (``data.runs``).

* Pooling: authors who publish one file per conversation. Each file is read with the same
  ``data`` settings and the records are pooled; question and conversation ids are
  prefixed with the file's name (``<stem>/<id>``) so that they stay distinct.
* Runs: authors who publish one file per run of the same system. Each file is one
  :class:`LoadedResults`; :class:`LoadedRuns` gives the stored J of each run and the mean
  and sample standard deviation across runs (the "75.14 ± 0.17" of papers).
"""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import CATEGORY_GROUPS
from locomo_exp.config import DataConfig
from locomo_exp.data.input_file import absolute_path, file_error
from locomo_exp.data.question_set import detect_question_set
from locomo_exp.data.read_file import LoadedResults, load_results, load_setting
from locomo_exp.data.settings import SeveralSettings
from locomo_exp.data.verdicts import mean_and_std
from locomo_exp.results import QARecord
from locomo_exp.results.words import counted

_GLOB_CHARS = set("*?[")


def expand_paths(spec: Any, start_dir: Path | None = None) -> list[Path]:
    """The files named by ``data.path``: one path, a list of paths, or glob patterns.

    Args:
        spec: a path (``str``/``Path``), a glob (``runs/*.json``) or a list of either.
        start_dir: directory relative paths are resolved against (default: cwd).

    Returns:
        Absolute paths in the order given (each glob sorted by name).

    Raises:
        DataValidationError: when a glob matches no file, or the list is empty.
    """
    start = Path(start_dir or Path.cwd())
    items = [spec] if isinstance(spec, (str, Path)) else list(spec)
    if not items:
        raise file_error("data.path", "is an empty list")
    paths: list[Path] = []
    for item in items:
        text = str(item)
        candidate = Path(text).expanduser()
        full = candidate if candidate.is_absolute() else start / candidate
        if _GLOB_CHARS & set(text) and not full.exists():
            matched = sorted(glob.glob(str(full)))
            if not matched:
                raise file_error(text, "no file matches this pattern")
            paths.extend(absolute_path(m) for m in matched)
        else:
            paths.append(absolute_path(full))
    return paths


def _prefixes(paths: Sequence[Path]) -> list[str]:
    stems = [p.stem for p in paths]
    return stems if len(set(stems)) == len(stems) else [f"{i + 1}-{s}" for i, s in enumerate(stems)]


def pool_results(
    paths: Sequence[str | Path],
    config: DataConfig | None = None,
    category_names: dict[int, str] | None = None,
) -> LoadedResults:
    """Read several files as one result (one file per conversation, say).

    Args:
        paths: the files (two or more; one is read as is).
        config: ``data`` settings, applied to each file; ``data.limit`` applies to the pool.
        category_names: display names keyed by id.

    Returns:
        One :class:`LoadedResults`: records in file order with ids ``<file stem>/<id>``
        (``<n>-<stem>`` when stems repeat), conversation ids likewise (the file stem when
        a file has none); ``sha256`` of the files' digests joined in order; ``sources``
        lists each file; ``format`` is the files' format(s) joined by ``+``.

    Raises:
        DataValidationError: as :func:`load_results`, for the first bad file.
    """
    config = config or DataConfig()
    if len(paths) == 1:
        return load_results(paths[0], config, category_names)
    per_file = replace(config, limit=None)
    loaded = [load_results(p, per_file, category_names) for p in paths]
    records: list[QARecord] = []
    stored_metrics: dict[str, dict[str, float]] = {}
    for prefix, part in zip(_prefixes([x.path for x in loaded]), loaded, strict=True):
        for question_id, values in part.stored_metrics.items():
            stored_metrics[f"{prefix}/{question_id}"] = values
        for record in part.records:
            conversation = (
                f"{prefix}/{record.conversation_id}" if record.conversation_id else prefix
            )
            records.append(
                replace(
                    record,
                    question_id=f"{prefix}/{record.question_id}",
                    conversation_id=conversation,
                    position=len(records),
                )
            )
    digest = hashlib.sha256("\n".join(x.sha256 for x in loaded).encode()).hexdigest()
    formats = "+".join(dict.fromkeys(x.format for x in loaded))
    judge_fields = {x.judge_field for x in loaded if x.judge_field}
    stated = {x.judge_stated for x in loaded}
    pooled = LoadedResults(
        records=records,
        path=loaded[0].path,
        sha256=digest,
        format=formats,
        skipped=[p for x in loaded for p in x.skipped],
        prediction_key=loaded[0].prediction_key,
        excluded_no_gold=[p for x in loaded for p in x.excluded_no_gold],
        missing_predictions=[p for x in loaded for p in x.missing_predictions],
        numeric_answers=[n for x in loaded for n in x.numeric_answers],
        judge_field=", ".join(sorted(judge_fields)) or None,
        judge_stated=stated.pop() if len(stated) == 1 else None,  # files naming one judge
        question_set=detect_question_set(records),
        sources=[(x.path, x.sha256) for x in loaded],
        stored_metrics=stored_metrics,
    )
    if config.limit is not None:
        from locomo_exp.data.sample import stratified_sample

        pooled.records, pooled.subset = stratified_sample(
            records, int(config.limit), int(config.seed)
        )
    return pooled


@dataclass
class LoadedRuns:
    """Several runs of one system on the same questions (``data.runs``).

    Attributes:
        runs: one :class:`LoadedResults` per run, in the order given.
    """

    runs: list[LoadedResults]

    def stored_j_per_run(self) -> dict[str, list[float | None]]:
        """Stored J (0-100) of each run per aggregate key (``"1"``..``"5"``, overall keys)."""
        table: dict[str, list[float | None]] = {}
        for key, members in CATEGORY_GROUPS.items():
            row: list[float | None] = []
            for run in self.runs:
                values = [
                    r.stored_judge_score
                    for r in run.records
                    if r.category in members and r.stored_judge_score is not None
                ]
                row.append(sum(values) / len(values) if values else None)
            table[key] = row
        return table

    def stored_j_across_runs(self) -> dict[str, dict[str, Any]]:
        """Per aggregate key: ``{"per_run", "mean", "std"}`` -- mean and sample std across runs.

        Two runs with stored J 50 and 100 give mean 75.00 and std 35.36.
        """
        out = {}
        for key, row in self.stored_j_per_run().items():
            mean, std = mean_and_std([v for v in row if v is not None])
            out[key] = {"per_run": row, "mean": mean, "std": std}
        return out


def load_runs(
    paths: Sequence[str | Path],
    config: DataConfig | None = None,
    category_names: dict[int, str] | None = None,
) -> LoadedRuns:
    """Read one file per run of the same system.

    Args:
        paths: the run files (``data.runs``), at least one.
        config: ``data`` settings, applied to each file.
        category_names: display names keyed by id.

    Returns:
        :class:`LoadedRuns`.

    Raises:
        DataValidationError: as :func:`load_results`; also when a run's questions are not
            the first run's (compared by question id, conversation and question text).
    """
    runs = [load_results(p, config, category_names) for p in paths]
    if not runs:
        raise file_error("data.runs", "is an empty list")

    def keys(run: LoadedResults) -> set[tuple[str, str | None, str]]:
        return {(r.question_id, r.conversation_id, r.question) for r in run.records}

    first = keys(runs[0])
    for run in runs[1:]:
        differ = len(first ^ keys(run))
        if differ:
            raise file_error(
                run.path,
                f"data.runs: not the same questions as {runs[0].path.name} "
                f"({counted(differ, 'question')} differ); runs must answer the same questions",
            )
    return LoadedRuns(runs)


def load_data(
    config: DataConfig, start_dir: Path | None = None, category_names: dict[int, str] | None = None
) -> LoadedResults | LoadedRuns:
    """Read what ``data`` names: one file, pooled files, or runs.

    Args:
        config: ``data`` settings: ``runs`` (a list of run files) wins over ``path``
            (one file, a list or a glob); relative paths, ``categories_from`` and
            ``reference`` resolve against ``start_dir``.
        start_dir: the directory the user started in (default: cwd).
        category_names: display names keyed by id.

    Returns:
        :class:`LoadedRuns` for ``data.runs``, and for one file whose records hold answers
        under several settings and no ``data.setting`` (one run per setting,
        :mod:`.settings`); else :class:`LoadedResults`.

    Raises:
        DataValidationError: for unreadable or invalid input.
        ValueError: when neither ``data.path`` nor ``data.runs`` is set.
    """
    start = Path(start_dir or Path.cwd())

    def resolve(value: str | None) -> str | None:
        return None if not value else str(absolute_path(start / Path(value).expanduser()))

    config = replace(
        config, categories_from=resolve(config.categories_from), reference=resolve(config.reference)
    )
    if config.runs:
        return load_runs(expand_paths(list(config.runs), start), config, category_names)
    if not config.path or config.path == "???":
        raise ValueError(
            "data.path is not set: pass data.path=<results file> (or use data=example)"
        )
    paths = expand_paths(config.path, start)
    if len(paths) == 1 and config.setting is None:
        try:
            return load_setting(paths[0], config, category_names)
        except SeveralSettings as several:  # one file, several settings: each is a run
            return LoadedRuns(
                [
                    load_setting(paths[0], replace(config, setting=name), category_names)
                    for name in several.names
                ]
            )
    return pool_results(paths, config, category_names)
