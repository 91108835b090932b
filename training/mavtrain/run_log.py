"""A training run's log: `log.jsonl` in the run dir, one JSON entry per line.

A module of its own below `train` and `export`, which both read it (the export writes the model card from it),
so that neither imports the other.
"""

from __future__ import annotations

import json
import os


class RunLog:
    """log.jsonl in the run dir; on resume the entries after the checkpoint step are dropped.

    `enabled=False` (ranks other than 0) touches no file and prints nothing.
    """

    def __init__(self, path: str, resume_step: int | None, enabled: bool = True):
        self.path = path
        self.enabled = enabled
        if not enabled:
            return
        if resume_step is not None and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                keep = [ln for ln in f if ln.strip() and json.loads(ln).get("step", 0) <= resume_step]
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(keep)
        elif resume_step is None and os.path.exists(path):
            os.remove(path)

    def write(self, entry: dict, echo: bool = True) -> None:
        """Append one entry (and print it unless `echo` is False)."""
        if not self.enabled:
            return
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        if echo:
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in entry.items()), flush=True)


def read_log(run_dir: str) -> list[dict]:
    """The entries of a run dir's log.jsonl (empty when there is none)."""
    path = os.path.join(run_dir, "log.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]
