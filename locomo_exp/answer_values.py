"""Moved to :mod:`locomo_exp.data.answer_values`; this name stays importable (same module object)."""

from __future__ import annotations

import sys

from locomo_exp.data import answer_values as _moved

sys.modules[__name__] = _moved
