"""The settings a template file fixes, applied where the command line does not set them.

A harness fixes its judge's ``temperature``, ``max_tokens`` and ``model`` (e.g. 0, 10,
gpt-4o-2024-08-06); a template that states them gets them without the user repeating
them. An explicit override wins (``judge.temperature=0.3``): the card then shows both the
template's value and the one used. ``model`` is not switched silently, because the judge
preset carries the provider and prices: a template fixing a model that the chosen preset
is not is one line naming a preset for it, unless ``judge=...`` or ``judge.model=...`` was
given explicitly.

Also :func:`command_line_template_problems`: templates named on the command line
(``judge.template=a.yaml,b.yaml``) are read before Hydra composes or writes anything.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, open_dict

from locomo_exp.judge.protocols.templates.schema import TemplateError, load_template

logger = logging.getLogger(__name__)

PRESET_DIR = Path(__file__).resolve().parents[3] / "conf" / "judge"
"""The judge presets (``conf/judge/<name>.yaml``)."""

_KEY_RE = re.compile(r"^[+~]{0,2}([\w.\-/]+)=")


def override_keys(overrides: list[str]) -> set[str]:
    """The keys the command line sets (``judge.temperature=0`` -> ``judge.temperature``)."""
    keys = set()
    for override in overrides:
        match = _KEY_RE.match(override.strip())
        if match:
            keys.add(match.group(1).split("@")[0])
    return keys


def _same_model(a: str, b: str) -> bool:
    """Equal ids, or one is the other with a date suffix (``gpt-4o-mini-2024-07-18``)."""
    return a == b or a.startswith(b + "-") or b.startswith(a + "-")


def presets_for_model(model: str, preset_dir: Path = PRESET_DIR) -> list[str]:
    """Names of the judge presets whose ``model`` is ``model`` (dated or not)."""
    import yaml

    found = []
    for path in sorted(preset_dir.glob("*.yaml")):
        try:
            preset = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(preset, dict) and _same_model(str(preset.get("model", "")), model):
            found.append(path.stem)
    return found


def apply_template_settings(cfg: DictConfig, overrides: list[str]) -> dict[str, Any]:
    """Put a template's fixed settings into the composed config, unless overridden.

    Args:
        cfg: the composed config (changed in place: ``judge.temperature``,
            ``judge.max_tokens``).
        overrides: the command-line overrides of this job.

    Returns:
        The settings applied (key -> value); empty without a template.

    Raises:
        TemplateError: the file cannot be used, or it fixes a model the chosen judge
            preset is not (one line naming a preset for it).
    """
    judge = cfg.get("judge")
    if judge is None or judge.get("protocol") != "template" or not judge.get("template"):
        return {}
    template = load_template(str(judge.template))
    explicit = override_keys(overrides)
    applied: dict[str, Any] = {}
    if template.temperature_fixed and "judge.temperature" not in explicit:
        applied["temperature"] = template.temperature
    if template.max_tokens is not None and "judge.max_tokens" not in explicit:
        applied["max_tokens"] = template.max_tokens
    model = template.model
    chosen = str(judge.get("model") or "")
    if model and not _same_model(model, chosen) and not {"judge", "judge.model"} & explicit:
        presets = presets_for_model(model)
        hint = (
            f"judge={presets[0]}"
            if presets
            else f"judge.model={model} with a judge preset whose API serves it"
        )
        raise TemplateError(
            f"judge.template={template.path}: the template fixes model {model}, the judge is "
            f"{chosen}; add {hint}, or name a judge explicitly (judge=<preset> or "
            "judge.model=<id>) to judge with another model on purpose"
        )
    with open_dict(judge):
        for key, value in applied.items():
            judge[key] = value
    if applied:
        logger.info("judge: template %s sets %s", template.name, applied)
    return applied


def command_line_template_problems(argv: list[str]) -> list[str]:
    """Problems of the template files named on the command line (sweep lists included).

    Args:
        argv: the command-line arguments after the program name.

    Returns:
        One line per unusable file (:class:`TemplateError`), empty when all are usable.
    """
    problems = []
    for arg in argv:
        match = re.match(r"^\+{0,2}judge\.template=(.*)$", arg.strip())
        if not match or not match.group(1) or match.group(1) in ("null", "None"):
            continue
        value = match.group(1)
        sweep = re.match(r"^(?:choice\()?(.*?)\)?$", value) if "," in value else None
        for path in (sweep.group(1) if sweep else value).split(","):
            path = path.strip().strip("'\"")
            if not path or "${" in path:
                continue
            try:
                load_template(path)
            except TemplateError as error:
                problems.append(str(error))
    return problems
