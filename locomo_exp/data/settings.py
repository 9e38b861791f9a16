"""Answers under per-setting keys: one record per question, one answer per setting.

Some evaluation harnesses answer every question under several settings of the memory
system (how many memories are retrieved, say) and keep the answers inside each record::

    {"metadata": {...}, "metrics_by_cutoff": {"top_200": {"overall": {"accuracy": 91.56}}},
     "evaluations": [{"question_id": "conv0_q0", "category": 2, "question": "...",
                      "ground_truth_answer": "...", "search_latency_ms": 3469.3,
                      "cutoff_results": {"top_200": {"generated_answer": "...",
                                                     "judgment": "CORRECT", "score": 1.0}}}]}

Each key under ``cutoff_results`` is a setting. :func:`apply_setting` turns the file into
plain records of one setting (the setting's fields merged into the question's), which every
other layout rule then reads. A file with one setting needs no option; with several, the
caller scores each as a run, or ``data.setting=<name>`` picks one.

A failed answer -- empty, blank or the text ``ERROR`` -- is a missing prediction (scored
0 and counted), and a stored ``judgment`` of ``ERROR`` counts as wrong, as the harness's
own accuracy (correct / all questions) does; both are counted in
:attr:`SettingInfo.n_failed`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from locomo_exp.data.answer_values import FailedAnswer
from locomo_exp.data.fields import PREDICTION_NAMES
from locomo_exp.data.raw import sample_records
from locomo_exp.data.verdicts import VERDICT_FIELDS
from locomo_exp.data.wrapped import locate_records

log = logging.getLogger(__name__)

FAILED_TEXT = "error"
"""An answer or verdict with this text (any case, spaces around) is a failure marker."""


class SeveralSettings(ValueError):
    """A file holds answers under several settings and none was chosen.

    Attributes:
        names: the settings, in the order they first appear.
        field: the record field holding them (``cutoff_results``).
    """

    def __init__(self, field_name: str, names: tuple[str, ...]):
        super().__init__(
            f"answers under {len(names)} settings of `{field_name}` ({', '.join(names)}): "
            "score one with data.setting=<name>, or pass this file alone as data.path to "
            "score each setting as a run"
        )
        self.field = field_name
        self.names = names


@dataclass(frozen=True)
class SettingInfo:
    """Which setting of a per-setting file was read.

    Attributes:
        field: the record field holding the settings (``cutoff_results``).
        setting: the setting read (``top_200``).
        settings: every setting in the file, in order of first appearance.
        n_failed: questions whose answer failed (empty, blank or ``ERROR``) or whose
            stored verdict is ``ERROR``: scored 0 and counted.
    """

    field: str
    setting: str
    settings: tuple[str, ...]
    n_failed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form for ``summary["input"]["setting"]``."""
        return {
            "field": self.field,
            "setting": self.setting,
            "settings": list(self.settings),
            "n_failed": self.n_failed,
        }


def _is_answer(value: Any) -> bool:
    return isinstance(value, dict) and any(name in value for name in PREDICTION_NAMES)


def detect_settings(records: list[dict[str, Any]]) -> tuple[str, tuple[str, ...]] | None:
    """The per-setting field of sample records and its settings, if the records have one.

    A field qualifies when the records have no prediction field of their own and its value
    is an object whose every value is an object with a prediction field
    (:data:`~.fields.PREDICTION_NAMES`).

    Args:
        records: sample records (dicts).

    Returns:
        ``(field, settings)``, settings in order of first appearance, or ``None``.
    """
    if not records or any(name in r for r in records for name in PREDICTION_NAMES):
        return None
    found: str | None = None
    names: list[str] = []
    for record in records:
        for key, value in record.items():
            if not (isinstance(value, dict) and value and all(map(_is_answer, value.values()))):
                continue
            found = found or key
            if key == found:
                names.extend(n for n in value if n not in names)
    return None if found is None else (found, tuple(names))


def _failed(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in ("", FAILED_TEXT)


def _flatten(record: Any, field_name: str, setting: str) -> tuple[Any, bool]:
    """One record of one setting: the setting's fields over the question's; failed marked."""
    if not isinstance(record, dict):
        return record, False
    settings = record.get(field_name)
    answer = settings.get(setting) if isinstance(settings, dict) else None
    flat = {k: v for k, v in record.items() if k != field_name}
    if not isinstance(answer, dict):
        return flat, False  # no answer for this setting: reported as a missing prediction
    flat.update(answer)
    failed = False
    for name in PREDICTION_NAMES:
        if name in answer and _failed(answer[name]):
            flat[name] = FailedAnswer(str(answer[name]))
            failed = True
            break
    for name in VERDICT_FIELDS:
        if name in answer and _failed(answer[name]):
            flat[name] = False  # the harness counts a failed judgment as not correct
            failed = True
    return flat, failed


def _put(obj: Any, key: str | None, value: Any) -> Any:
    """``obj`` with the value at dotted ``key`` replaced (copies along the path only)."""
    if key is None:
        return value
    head, _, rest = key.partition(".")
    copy = dict(obj)
    copy[head] = _put(obj[head], rest or None, value)
    return copy


def apply_setting(
    obj: Any, records_key: str | None, setting: str | None
) -> tuple[Any, SettingInfo | None]:
    """Turn a per-setting file into plain records of one setting.

    Args:
        obj: the parsed file.
        records_key: ``data.records_key``, or ``None`` to detect where the records are.
        setting: ``data.setting``; ``None`` reads the only one.

    Returns:
        ``(obj, None)`` unchanged when the records have no per-setting field, else the
        file with its records replaced by those of the setting, and :class:`SettingInfo`.

    Raises:
        SeveralSettings: several settings and ``setting`` is ``None``.
        ValueError: ``setting`` names none of the file's settings, or is given for a file
            without settings.
    """
    try:
        found = locate_records(obj, records_key)
    except ValueError:
        found = None
    detected = detect_settings(sample_records(found.records)) if found is not None else None
    if detected is None or found is None:
        if setting is not None:
            raise ValueError(
                f"data.setting={setting}: the records hold no answers under per-setting keys"
            )
        return obj, None
    field_name, names = detected
    if setting is None:
        if len(names) > 1:
            raise SeveralSettings(field_name, names)
        setting = names[0]
    elif setting not in names:
        raise ValueError(
            f"data.setting={setting}: no such setting under `{field_name}`; "
            f"the file has: {', '.join(names)}"
        )
    n_failed = 0

    def flat(record: Any) -> Any:
        nonlocal n_failed
        out, failed = _flatten(record, field_name, setting)
        n_failed += failed
        return out

    records = found.records
    if isinstance(records, list):
        new: Any = [flat(r) for r in records]
    else:
        new = {k: [flat(r) for r in v] if isinstance(v, list) else v for k, v in records.items()}
    if n_failed:
        log.warning(
            "setting %s: %d question(s) with a failed answer or verdict (empty or ERROR), "
            "each scored 0",
            setting,
            n_failed,
        )
    return _put(obj, found.key, new), SettingInfo(field_name, setting, names, n_failed)


__all__ = ["SettingInfo", "SeveralSettings", "apply_setting", "detect_settings"]
