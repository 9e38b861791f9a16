"""Command line: ``python -m locomo_exp [overrides]`` (a Hydra app; see ``locomo_exp/conf/``)."""

from __future__ import annotations

import gc

# One job builds a large heap once -- Hydra, MLflow, SQLAlchemy, pandas, the judge's SDK --
# and keeps it to the end. With CPython's default thresholds (700, 10, 10) the collector
# walks it again and again: about a fifth of the main job's CPU time. Collect the young
# generation every 50,000 allocations instead; garbage cycles are still collected.
gc.set_threshold(50_000, 20, 20)

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402

from locomo_exp.config import register_configs  # noqa: E402

register_configs()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    """Convert the composed config to typed dataclasses and run one scoring job."""
    from locomo_exp.cli import run_from_hydra

    try:
        run_from_hydra(cfg)
    except SystemExit as stop:
        if stop.code == 1:  # the user's mistake: leave no run directory holding only Hydra's
            from locomo_exp.report.run_dir import remove_hydra_only_run_dir_of_this_run

            remove_hydra_only_run_dir_of_this_run()
        raise


if __name__ == "__main__":
    import sys

    from locomo_exp.cli import HELP_FLAGS, app_help, check_command_line

    check_command_line(sys.argv[1:])  # the project's "did you mean" before Hydra's hint
    if any(flag in sys.argv[1:] for flag in HELP_FLAGS):
        try:
            print(app_help(sys.argv[1:]), flush=True)  # Hydra's layout, without its copies
        except BrokenPipeError:
            # The reader stopped early (``--help | head -3``): not an error. Point stdout at
            # the null device so the interpreter's final flush does not raise again.
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0)
    try:
        main()
    finally:
        # Everything is written, flushed and closed: skip the interpreter's last garbage
        # collection over every object the imported libraries made (MLflow, SQLAlchemy,
        # pandas), which takes about a second at exit; the objects are freed with the process.
        gc.freeze()
