"""Hydra's run-mode probe without a second composition of the config.

Before every job Hydra 1.3 composes the whole config once only to read ``hydra.mode``
(``Hydra.get_mode``, called from ``hydra._internal.utils._run_hydra``), then composes it
again to run. The project's packaged config never sets ``hydra.mode`` (a test checks
it), so when nothing on the command line can set it the probe's answer is known: ``None``,
and Hydra takes the mode from ``-m``/``--multirun`` as it would after composing. That
saves one composition, ~0.1-0.3 s of CPU per command (``benchmarks/judge_whole_command.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

PACKAGED_CONFIG_NAME = "config"
"""The primary config of ``locomo_exp/conf/`` (``@hydra.main(config_name=...)``)."""

_CONFIG_FLAGS = ("-cp", "--config-path", "-cn", "--config-name", "-cd", "--config-dir")
"""Command-line flags that bring in configs other than the packaged ones."""

_MODE_KEYS = ("hydra.mode", "hydra.searchpath", "hydra/")
"""Overrides that could set ``hydra.mode`` or bring in configs that set it."""


def mode_is_known_unset(
    config_name: str | None, overrides: Sequence[str], argv: Sequence[str]
) -> bool:
    """Whether ``hydra.mode`` is surely unset for this command (the probe would give ``None``).

    Args:
        config_name: the primary config's name Hydra was given.
        overrides: the command's overrides (``key=value`` strings).
        argv: the whole command line (for ``--config-dir`` and the like).

    Returns:
        True when the primary config is the packaged one, no flag adds other configs and no
        override names ``hydra.mode``, ``hydra.searchpath`` or a ``hydra/`` group.
    """
    if config_name != PACKAGED_CONFIG_NAME:
        return False
    if any(arg.split("=", 1)[0] in _CONFIG_FLAGS for arg in argv):
        return False
    return not any(key in override for override in overrides for key in _MODE_KEYS)


def skip_mode_probe_when_known(argv: Sequence[str]) -> None:
    """Patch ``Hydra.get_mode``: ``None`` without composing when :func:`mode_is_known_unset`.

    Otherwise it composes as before.

    Args:
        argv: the command line (``sys.argv[1:]``).
    """
    from hydra._internal.hydra import Hydra

    probe = Hydra.get_mode
    if getattr(probe, "skips_known_unset", False):
        return

    def get_mode(self: Any, config_name: str | None, overrides: list[str]) -> Any:
        if mode_is_known_unset(config_name, overrides, argv):
            return None
        return probe(self, config_name, overrides)

    get_mode.skips_known_unset = True  # type: ignore[attr-defined]
    Hydra.get_mode = get_mode  # type: ignore[method-assign]
