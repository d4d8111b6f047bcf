"""One ``LLM calls: N replayed from cache`` line per notebook cell.

A run that sends nothing prints that line instead of a progress bar; a cell that makes
19 such runs printed 19 lines. Under IPython, :func:`tally_replays_per_cell` (called by
``setup``) sums them and prints one line after the cell (IPython's ``post_run_cell``
event); elsewhere each run prints its own line, as before.
"""

from __future__ import annotations

from typing import Any


class ReplayTally:
    """Replayed and missing counts of the runs of one cell."""

    def __init__(self) -> None:
        self.replayed = self.missing = 0

    def add(self, replayed: int, missing: int) -> None:
        self.replayed += replayed
        self.missing += missing

    def flush(self, *_: Any) -> None:
        """Print the cell's line (when a run replayed anything) and start again."""
        from workbench.llm._pipeline import replay_line

        if self.replayed or self.missing:
            print(replay_line(self.replayed, self.missing))
        self.replayed = self.missing = 0


TALLY = ReplayTally()


def tally_replays_per_cell(shell: Any = None) -> bool:
    """Send the replay lines of ``shell`` (default: the running IPython) to :data:`TALLY`,
    printed once per cell; ``False`` outside IPython."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    from workbench.llm import _pipeline

    _pipeline.replay_listener = TALLY.add
    if TALLY.flush not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", TALLY.flush)
    return True
