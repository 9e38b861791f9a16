"""Moved to :mod:`locomo_exp.data.input_file`; this name stays importable (same module object)."""

from __future__ import annotations

import sys

from locomo_exp.data import input_file as _moved

sys.modules[__name__] = _moved
