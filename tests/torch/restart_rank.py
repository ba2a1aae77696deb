#!/usr/bin/env python3
"""One rank of an external job run by torchrun --max_restarts 1, for
FulcrumTorch.test_a_torchrun_restart_goes_on_in_the_same_job_from_its_checkpoint.

    restart_rank.py SERVER TOKEN_FILE STATE_DIR OUT_JSON

It trains a small MLP through fulcrum_torch.train, a checkpoint after every 5th iteration in
STATE_DIR. In the group's first attempt rank 1 is killed at iteration 12, as an OOM killer
would; torchrun then stops rank 0 and starts the group again, which rejoins the same job
from the checkpoint after iteration 9. Rank 0 writes what it saw to OUT_JSON.
"""

import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import fulcrum_torch  # noqa: E402


def main():
    server, token_file, state_dir, out = sys.argv[1:5]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    torch.set_num_threads(1)
    scenario = fulcrum_torch.external_scenario("restarted", world, 64, 30, policy={"type": "uniform"},
                                               rank_timeout_s=30, worker_timeout_s=5, max_restarts=1)
    dist.init_process_group("gloo", init_method="env://", timeout=fulcrum_torch.process_group_timeout(scenario))
    g = torch.Generator()
    g.manual_seed(3)
    x, y = torch.randn(1000, 12, generator=g), torch.randint(0, 4, (1000,), generator=g)
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    token = fulcrum_torch.read_token_file(token_file, "operator")

    def on_iteration(k, plan):
        if attempt == 0 and rank == 1 and k == 12:
            os.kill(os.getpid(), signal.SIGKILL)

    with fulcrum_torch.FulcrumClient(server, token) as client:
        job = fulcrum_torch.ExternalJob(client, rank, scenario=scenario, state_dir=state_dir)
        result = fulcrum_torch.train(model, x, y, job=job, rank=rank, lr=0.05, on_iteration=on_iteration,
                                     checkpoint_every=5)
        if rank == 0:
            with open(out, "w", encoding="utf-8") as f:
                json.dump({"job": job.job, "attempt": attempt, "resumed_from": job.resumed_from,
                           "state": result.state, "first": result.log[0][0] if result.log else None,
                           "iterations": result.iterations}, f)
    os._exit(0)  # torch 1.13's DDP comm hook can deadlock at teardown (clients/python/README.md)


if __name__ == "__main__":
    main()
