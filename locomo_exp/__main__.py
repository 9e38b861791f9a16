"""Command line: ``python -m locomo_exp [overrides]`` (a Hydra app; see ``locomo_exp/conf/``)."""

from __future__ import annotations

import gc
import os
from typing import Any, TextIO

if __name__ == "__main__":  # before the heavy imports: an interrupt during them is not lost
    from locomo_exp.results import interrupts

    interrupts.install()

# One job builds a large heap once -- Hydra, MLflow, SQLAlchemy, pandas, the judge's SDK --
# and keeps it to the end. With CPython's default thresholds (700, 10, 10) the collector
# walks it again and again: about a fifth of the main job's CPU time. Collect the young
# generation every 50,000 allocations instead; garbage cycles are still collected.
gc.set_threshold(50_000, 20, 20)

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402

from locomo_exp.config import register_configs  # noqa: E402

register_configs()


class QuietWhenReaderLeaves:
    """Standard output that goes to the null device once its reader has gone.

    ``python -m locomo_exp ... | head -1``: ``head`` exits after one line and the next write
    or flush raises ``BrokenPipeError`` -- in Hydra's console log handler (a "Logging error"
    traceback per line), in the result's ``print`` (Hydra's "Error executing job"), or at
    the interpreter's last flush. As the Python docs advise for SIGPIPE (``signal`` module,
    "Note on SIGPIPE"), the first such error points file descriptor 1 at ``os.devnull``;
    the job goes on and writes every output file, and nothing more is said about the pipe.
    SIGPIPE keeps Python's default (ignored): restoring ``SIG_DFL`` would kill the job
    mid-way, with its outputs unwritten.

    Args:
        stream: the real ``sys.stdout``; every other attribute is read from it.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text``; after the reader has gone it is dropped (its length is returned)."""
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_null()
            return len(text)

    def flush(self) -> None:
        """Flush; after the reader has gone what was buffered goes to the null device."""
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_null()

    def _to_null(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, self._stream.fileno())
        os.close(null)
        try:
            self._stream.flush()  # the buffered text, now to the null device
        except BrokenPipeError:  # pragma: no cover - fd 1 is the null device now
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    """Convert the composed config to typed dataclasses and run one scoring job."""
    from locomo_exp.benchmarks.registry import protocols_in_use
    from locomo_exp.cli import run_from_hydra

    try:
        with protocols_in_use():  # the judge resolves the plug-ins' protocols by name
            run_from_hydra(cfg)
    except BaseException as stop:
        from locomo_exp.report.run_dir import (
            remove_hydra_only_run_dir_of_this_run,
            restore_previous_hydra_files,
        )

        restore_previous_hydra_files()  # overwrite=true refused: .hydra/ of the kept run again
        if isinstance(stop, SystemExit) and stop.code == 1:  # the user's mistake: leave no
            remove_hydra_only_run_dir_of_this_run()  # run directory holding only Hydra's files
        raise


if __name__ == "__main__":
    import sys

    from locomo_exp.cli import HELP_FLAGS, app_help, check_command_line
    from locomo_exp.config.hydra_mode import skip_mode_probe_when_known

    # before Hydra's logging config reads ext://sys.stdout: ``... | head -1`` ends quietly
    sys.stdout = QuietWhenReaderLeaves(sys.stdout)
    check_command_line(sys.argv[1:])  # the project's "did you mean" before Hydra's hint
    if any(flag in sys.argv[1:] for flag in HELP_FLAGS):
        print(app_help(sys.argv[1:]), flush=True)  # Hydra's layout, without its copies
        raise SystemExit(0)
    skip_mode_probe_when_known(sys.argv[1:])  # the config composed once, not twice
    try:
        main()
    finally:
        # Everything is written, flushed and closed: skip the interpreter's last garbage
        # collection over every object the imported libraries made (MLflow, SQLAlchemy,
        # pandas), which takes about a second at exit; the objects are freed with the process.
        gc.freeze()
