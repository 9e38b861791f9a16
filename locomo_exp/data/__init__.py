"""Reading results files: answers of a memory system to LoCoMo questions.

Layouts, all detected with no option (``data.format=auto``):

* ``qa_results`` (:mod:`.qa_results`) -- a JSON list of ``{question, ground_truth,
  predicted_answer, category}`` with optional ids, evidence, latencies, context tokens.
* ``locomo`` (:mod:`.locomo`) -- LoCoMo's own output: a list of samples ``{sample_id, qa}``
  whose QA items hold the gold fields, one ``<name>_prediction`` and maybe ``<name>_llm``.
* ``mem0`` (:mod:`.mem0`) -- the Mem0 evaluation harness: conversation index -> list of
  ``{question, answer, response, category, llm_score, ...}``.
* ``fields`` (:mod:`.fields`) -- any list, dict of lists or JSON Lines whose field names
  are detected (``standard_answer``, ``generated_answer``, Zep's ``golden_answer``...) or
  given with ``data.format=fields`` and ``data.fields.*``.
* records beside metadata (:mod:`.wrapped`) -- any of these inside an object that also
  holds the file's own aggregates; ``data.records_key`` when ambiguous.

Stored verdicts of another judge are detected with their field (:mod:`.verdicts`);
several files pool into one result or load as runs (:mod:`.load`); the question set
is named (:mod:`.question_set`); ``data.reference`` checks questions against LoCoMo's
dataset (:mod:`.reference`); ``data.limit`` samples per category (:mod:`.sample`).
"""

from __future__ import annotations

from locomo_exp.data.detect import Layout, detect_format, detect_layout
from locomo_exp.data.input_file import DataValidationError, RecordProblem, read_results_file
from locomo_exp.data.load import LoadedRuns, expand_paths, load_data, load_runs, pool_results
from locomo_exp.data.locomo import detect_prediction_key
from locomo_exp.data.parse_record import parse_category
from locomo_exp.data.question_set import QuestionSet, detect_question_set
from locomo_exp.data.read_file import LoadedResults, load_results, read_json_or_jsonl
from locomo_exp.data.reference import Reference, ReferenceCheck
from locomo_exp.data.verdicts import stored_judge_detail

__all__ = [
    "DataValidationError",
    "Layout",
    "LoadedResults",
    "LoadedRuns",
    "QuestionSet",
    "RecordProblem",
    "Reference",
    "ReferenceCheck",
    "detect_format",
    "detect_layout",
    "detect_prediction_key",
    "detect_question_set",
    "expand_paths",
    "load_data",
    "load_results",
    "load_runs",
    "parse_category",
    "pool_results",
    "read_json_or_jsonl",
    "read_results_file",
    "stored_judge_detail",
]
