"""The one list of file layouts: :data:`LAYOUTS`, each a :class:`~.layout_spec.LayoutSpec`.

Everything that names a layout is derived from it: the ``data.format`` values the config
accepts (:data:`FORMATS`, checked by :func:`format_problems` before any work), the order
in which detection tries them (:func:`locomo_exp.data.detect.detect_layout`) and its error
text (:func:`expected_layouts_message`), and how loading walks a file's records.

Adding a layout ``foo``: write ``locomo_exp/data/foo.py`` defining
``LAYOUT = LayoutSpec(name="foo", scope=..., looks_for=..., matches=..., build=...)``
(see :mod:`.layout_spec`), and add ``foo.LAYOUT`` to :data:`LAYOUTS` below, before any
layout that would also match its files.
"""

from __future__ import annotations

from locomo_exp.data import fields, locomo, mem0, qa_results
from locomo_exp.data.layout_spec import LayoutSpec

LAYOUTS: tuple[LayoutSpec, ...] = (
    qa_results.LAYOUT,
    locomo.LAYOUT,
    mem0.LAYOUT,
    fields.LAYOUT,
)
"""Every layout, in detection order within a scope (``file`` layouts are tried first);
``fields`` (field names detected among those public harnesses use) comes last. Another
benchmark's answer layouts belong to its plug-in (``locomo_exp/benchmarks/<name>/``), whose
``formats`` the config check adds (:mod:`locomo_exp.benchmarks.names`)."""

LOCOMO = "locomo"
""":attr:`~.layout_spec.LayoutSpec.benchmark` of the layouts LoCoMo's loading detects."""

LOCOMO_LAYOUTS: tuple[LayoutSpec, ...] = tuple(s for s in LAYOUTS if s.benchmark == LOCOMO)
"""The layouts LoCoMo's loading detects (``data.format=auto``), in order."""

AUTO = "auto"
"""``data.format`` value that detects the layout."""

FORMATS: tuple[str, ...] = (AUTO, *(spec.name for spec in LAYOUTS))
"""Allowed values of ``data.format``."""


def format_problems(value: str) -> list[str]:
    """``data.format``'s problem when it is neither ``auto`` nor a layout, checked before any work.

    Args:
        value: the configured ``data.format``.

    Returns:
        ``["data.format=xml must be one of auto, qa_results, ..."]``, or ``[]`` when known.
    """
    if value in FORMATS:
        return []
    return [f"data.format={value} must be one of {', '.join(FORMATS)}"]


def layout_spec(name: str) -> LayoutSpec:
    """The spec of a layout.

    Args:
        name: a ``data.format`` value other than ``auto``.

    Returns:
        Its :class:`~.layout_spec.LayoutSpec`.

    Raises:
        ValueError: ``unknown data.format 'x'. Available: auto, qa_results, ...``.
    """
    for spec in LAYOUTS:
        if spec.name == name:
            return spec
    raise ValueError(f"unknown data.format {name!r}. Available: {', '.join(FORMATS)}")


def expected_layouts_message() -> str:
    """The one-line error when no layout matches a file, listing what each looks for."""
    wanted = [spec.looks_for for spec in LOCOMO_LAYOUTS]
    expected = ", ".join(wanted[:-1]) + (", or " if len(wanted) > 1 else "") + wanted[-1]
    return (
        f"cannot detect the format (expected {expected}, possibly inside an object); set "
        "data.format and, for other layouts, data.format=fields with "
        "data.fields.question=... etc."
    )


__all__ = [
    "AUTO",
    "FORMATS",
    "LAYOUTS",
    "LOCOMO",
    "LOCOMO_LAYOUTS",
    "format_problems",
    "layout_spec",
    "expected_layouts_message",
]
