"""Overrides Hydra cannot read, or reads as a sweep without ``-m``: one line each.

Hydra answers ``data.path`` (no ``=``) with ``Error parsing override ...`` and a pointer to
``HYDRA_FULL_ERROR``, and ``f1=squad,locomo`` without ``-m`` with ``Ambiguous value for
argument ...`` over four lines. :func:`override_syntax_problems` finds both before Hydra
starts, so the command line reports them in the project's one form (``error: ...``).
"""

from __future__ import annotations

MULTIRUN_FLAGS = ("-m", "--multirun")
"""Hydra's flags for a sweep (one job per combination of values)."""

FLAGS_WITH_VALUE = frozenset(
    {
        "-cp",
        "--config-path",
        "-cn",
        "--config-name",
        "-cd",
        "--config-dir",
        "-c",
        "--cfg",
        "-p",
        "--package",
        "-i",
        "--info",
        "--experimental-rerun",
    }
)
"""Hydra's flags whose value is the next argument (not an override)."""


def override_syntax_problems(argv: list[str]) -> list[str]:
    """One message per override Hydra cannot parse, or that sweeps without ``-m``.

    Args:
        argv: the command-line arguments after the program name.

    Returns:
        e.g. ``["data.path: not key=value (Hydra: missing EQUAL at '<EOF>')"]`` or
        ``["f1=squad,locomo: several values without -m; add -m to run one job per value,
        or quote them to keep one text value (f1='squad,locomo')"]``.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    multirun = any(arg in MULTIRUN_FLAGS for arg in argv)
    problems: list[str] = []
    skip_next = False
    for arg in argv:
        if skip_next or arg.startswith("-"):
            skip_next = not skip_next and arg in FLAGS_WITH_VALUE
            continue
        try:
            override = parser.parse_override(arg)
        except HydraException as error:
            detail = str(error).strip().splitlines()[-1] if str(error).strip() else "unreadable"
            problems.append(f"{arg}: not key=value (Hydra: {detail})")
            continue
        if override.is_sweep_override() and not multirun:
            key, _, value = arg.partition("=")
            problems.append(
                f"{arg}: several values without -m; add -m to run one job per value, or "
                f"quote them to keep one text value ({key}='{value}')"
            )
    return problems
