"""Command line: ``python -m locomo_exp [overrides]`` (a Hydra app; see ``locomo_exp/conf/``)."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from locomo_exp.config import register_configs

register_configs()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    """Convert the composed config to typed dataclasses and run one scoring job."""
    from locomo_exp.cli import run_from_hydra

    run_from_hydra(cfg)


if __name__ == "__main__":
    import sys

    from locomo_exp.cli import HELP_FLAGS, app_help, check_command_line

    check_command_line(sys.argv[1:])  # the project's "did you mean" before Hydra's hint
    if any(flag in sys.argv[1:] for flag in HELP_FLAGS):
        print(app_help(sys.argv[1:]))  # Hydra's layout, without its per-group copies
        raise SystemExit(0)
    main()
