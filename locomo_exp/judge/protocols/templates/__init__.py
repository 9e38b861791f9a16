"""Judge prompts from the user's own files: ``judge.protocol=template judge.template=FILE.yaml``.

:mod:`.schema` reads and validates a file (:mod:`.checks`: placeholders and ``by_kind``
names), :mod:`.verdicts` reads replies with its rule,
:mod:`locomo_exp.judge.protocols.template` turns it into a judge protocol, and
:mod:`.settings` applies the settings a file fixes (temperature, max_tokens, model) where
the command line does not set them.
"""

from __future__ import annotations

from locomo_exp.judge.protocols.templates.schema import (
    OUR_FIELDS,
    JudgeTemplate,
    TemplateError,
    load_template,
)
from locomo_exp.judge.protocols.templates.verdicts import VerdictRule

__all__ = ["OUR_FIELDS", "JudgeTemplate", "TemplateError", "VerdictRule", "load_template"]
