"""A job's state folder across torchrun restarts: the id of the job rank 0 submitted, and
the user's last checkpoint with the iteration it goes on from. Every rank reads it, so on
several hosts it must be a folder they share."""

import json
import os
from pathlib import Path
from typing import Any, Dict, Optional

import torch

# Tensors, numbers, strings and containers of them, as state_dicts are: nothing else is
# unpickled from a folder several hosts share. torch 1.13's weights_only unpickler refuses a
# plain float (an optimizer's learning rate), so there the folder must be trusted.
SAFE_LOAD = int(torch.__version__.split(".")[0]) >= 2

JOB_FILE = "fulcrum-job.json"
CHECKPOINT_FILE = "fulcrum-checkpoint.pt"


class StateFolder:
    def __init__(self, path: str):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    def job(self) -> Optional[int]:
        """The job an earlier attempt in this folder submitted, if any."""
        try:
            with open(self.path / JOB_FILE, encoding="utf-8") as f:
                return int(json.load(f)["job"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def remember_job(self, job: int) -> None:
        self._replace(JOB_FILE, lambda f: f.write(json.dumps({"job": job}).encode()))

    def checkpoint(self, job: int) -> Optional[Dict[str, Any]]:
        """The last checkpoint of `job` ({"job", "iteration", "state"}), or None: none saved,
        or one of another job (an earlier run in this folder)."""
        path = self.path / CHECKPOINT_FILE
        if not path.exists():
            return None
        saved = torch.load(path, map_location="cpu", weights_only=SAFE_LOAD)
        if not isinstance(saved, dict) or saved.get("job") != job or "iteration" not in saved:
            return None
        return saved

    def save(self, job: int, iteration: int, state: Dict[str, Any]) -> None:
        """`state` of `job`, to go on from `iteration`: written beside, then renamed, so a
        process killed meanwhile leaves the previous checkpoint whole."""
        self._replace(CHECKPOINT_FILE, lambda f: torch.save({"job": job, "iteration": iteration, "state": state}, f))

    def _replace(self, name: str, write) -> None:
        partial = self.path / (name + ".partial")
        with open(partial, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, self.path / name)


__all__ = ["CHECKPOINT_FILE", "JOB_FILE", "StateFolder"]
