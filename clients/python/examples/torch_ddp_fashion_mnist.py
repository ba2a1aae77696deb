#!/usr/bin/env python3
"""Trains an MLP on Fashion-MNIST with torch.distributed under fulcrumd.

Every rank's batch size comes from fulcrumd's BatchSizeManager (LB-BSP), gradients are
aggregated by LB-BSP eq. 7 in the DDP hook, and fulcrumd records and streams the job: watch
it in the console or with `fulcrumctl watch JOB`, pin or exclude a rank there.

    fulcrumd --data-dir /tmp/fulcrum &        # prints its address and token file
    python3 clients/python/examples/torch_ddp_fashion_mnist.py \\
        --server ws://127.0.0.1:7480 --token-file /tmp/fulcrum/tokens --ranks 2

`--plain-ddp` trains the same model with equal batches and DDP's own averaging and no
fulcrumd (the baseline). The ranks are processes of this script (torch.multiprocessing);
under torchrun (RANK and WORLD_SIZE set) each process is one rank and `--job` joins ranks
1.. to the job rank 0 submitted.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

import fulcrum_torch  # noqa: E402
from fulcrum_torch import fashion_mnist  # noqa: E402


def mlp(hidden):
    layers, width = [], 784
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, 10))
    return torch.nn.Sequential(*layers)


def evaluator(test_x, test_y, device):
    def evaluate(model):
        with torch.no_grad():
            out = model(test_x.to(device))
            return (float((out.argmax(1) == test_y.to(device)).float().mean()),
                    float(F.cross_entropy(out, test_y.to(device))))
    return evaluate


def plain_ddp(model, train_x, train_y, args, rank, world, device):
    """The baseline: equal batches, DDP's averaging, no fulcrumd."""
    ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    if args.eq7_hook:  # the hook's own cost: equal weights give DDP's average
        state = fulcrum_torch.WeightedAllReduce()
        ddp.register_comm_hook(state, fulcrum_torch.weighted_allreduce_hook)
        state.start_iteration(1, world)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum)
    slicer = fulcrum_torch.GlobalBatchSlicer(len(train_x), args.seed)
    sizes = [args.total_batch // world + (1 if r < args.total_batch % world else 0) for r in range(world)]
    for _ in range(args.iterations):
        idx = slicer.next_slice(sizes, rank)
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(ddp(train_x[idx].to(device)), train_y[idx].to(device)).backward()
        optimizer.step()
    return args.iterations


def rank_main(rank, args):
    world = args.ranks if args.torchrun_world is None else args.torchrun_world
    if args.cores:
        os.sched_setaffinity(0, {args.cores[rank % len(args.cores)]})
    torch.set_num_threads(args.threads_per_rank)
    device = torch.device(f"cuda:{rank % max(1, torch.cuda.device_count())}" if args.device == "cuda" else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    scenario = fulcrum_torch.external_scenario(args.name, world, args.total_batch, args.iterations,
                                               policy=json.loads(args.policy), eval_interval=args.eval_interval,
                                               rank_timeout_s=args.rank_timeout,
                                               worker_timeout_s=args.worker_timeout,
                                               samples_per_epoch=fashion_mnist.TRAIN_SAMPLES,
                                               max_restarts=args.max_restarts)
    # A collective that waits for a lost rank raises after the job's rank and worker timeouts,
    # and train() then says which rank fulcrumd lost (FulcrumError), instead of gloo's 30 minutes.
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", init_method=args.init_method,
                            rank=rank, world_size=world, timeout=fulcrum_torch.process_group_timeout(scenario))
    train_x, train_y, test_x, test_y = fashion_mnist.load(args.data)
    torch.manual_seed(args.seed)  # the same initial parameters on every rank
    model = mlp(args.hidden).to(device)
    result = {"rank": rank}
    started = time.perf_counter()
    if args.plain_ddp:
        result.update(iterations=plain_ddp(model, train_x, train_y, args, rank, world, device), state="finished")
        if rank == 0:
            result["accuracy"] = evaluator(test_x, test_y, device)(model)[0]
        result["train_s"] = time.perf_counter() - started
    else:
        token = fulcrum_torch.read_token_file(args.token_file, args.role) if args.token_file else os.environ["FULCRUM_TOKEN"]
        with fulcrum_torch.FulcrumClient(args.server, token, ca_file=args.ca_file, name=f"fulcrum_torch rank {rank}") as client:
            job = fulcrum_torch.ExternalJob(client, rank, scenario=scenario, job=args.job, state_dir=args.state_dir)
            if rank == 0:
                print(f"job {job.job}: {world} ranks, {args.iterations} iterations of {args.total_batch} samples "
                      + (f"from iteration {job.resumed_from} (its checkpoint) " if job.resumed_from else "")
                      + f"(fulcrumctl watch {job.job})", flush=True)
            try:
                trained = fulcrum_torch.train(model, train_x, train_y, job=job, rank=rank, lr=args.lr,
                                              momentum=args.momentum, seed=args.seed, eval_interval=args.eval_interval,
                                              evaluate=evaluator(test_x, test_y, device), device=device,
                                              checkpoint_every=args.checkpoint_every if args.state_dir else 0)
            except fulcrum_torch.FulcrumError as e:  # a peer was lost mid all-reduce: say which, and end
                print(f"rank {rank}: {e}", file=sys.stderr, flush=True)
                sys.stderr.flush()
                os._exit(3)  # the process group cannot be torn down with a peer gone
            result.update(job=job.job, iterations=trained.iterations, state=trained.state, message=trained.message,
                          accuracy=trained.accuracy, log=trained.log, train_s=trained.wall_s)
    result["wall_s"] = time.perf_counter() - started
    dist.barrier()
    dist.destroy_process_group()
    if args.json_out:
        with open(f"{args.json_out}.rank{rank}", "w", encoding="utf-8") as f:
            json.dump(result, f)
    if rank == 0:
        print(f"rank 0: {result['state']} after {result['iterations']} iterations in {result['wall_s']:.1f} s"
              + (f", test accuracy {result['accuracy']:.4f}" if result.get("accuracy") is not None else "")
              + (f" ({result['message']})" if result.get("message") else ""), flush=True)
    # os._exit: torch 1.13's gloo process group can deadlock when a DDP with a Python comm
    # hook is destroyed at exit (a gloo thread waits for the GIL the destructor holds).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if result["state"] == "finished" else 3)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.environ.get("FULCRUM_SERVER", "ws://127.0.0.1:7480"),
                   help="fulcrumd's address: ws://HOST:PORT, wss://HOST:PORT or HOST:PORT "
                        "(default: $FULCRUM_SERVER or ws://127.0.0.1:7480)")
    p.add_argument("--token-file", help="fulcrumd's token file (default: $FULCRUM_TOKEN holds the token)")
    p.add_argument("--role", default="operator", help="the token file's role to use (rank 0 submits: operator)")
    p.add_argument("--ca-file", help="the CA that signed a wss:// server's certificate")
    p.add_argument("--ranks", type=int, default=2, help="ranks to start (default 2)")
    p.add_argument("--job", type=int, help="join this job instead of submitting one (torchrun ranks 1..)")
    p.add_argument("--name", default="torch-ddp-fashion-mnist", help="the job's name in fulcrumd")
    p.add_argument("--policy", default='{"type": "lbbsp-cpu"}', help="the batch-size policy section, JSON")
    p.add_argument("--total-batch", type=int, default=512, help="the global batch X (default 512)")
    p.add_argument("--iterations", type=int, default=118, help="iterations (default 118: one epoch at X = 512)")
    p.add_argument("--eval-interval", type=int, default=50)
    p.add_argument("--rank-timeout", type=float, default=120,
                   help="s: a rank that has not reported this long after its plan is lost, and the job (or the "
                        "attempt) with it; an evaluation does not count (default 120)")
    p.add_argument("--worker-timeout", type=float, default=None,
                   help="s: a rank whose process is silent this long is lost (default: fulcrumd's --worker-timeout)")
    p.add_argument("--max-restarts", type=int, default=0,
                   help="as torchrun's --max_restarts: a lost rank ends only the attempt, and the restarted group "
                        "rejoins the job from its checkpoint (give --state-dir)")
    p.add_argument("--state-dir", help="a folder every rank reads: the job's id and its checkpoints, so that a "
                                       "torchrun restart rejoins the same job")
    p.add_argument("--checkpoint-every", type=int, default=20,
                   help="with --state-dir: save the model and optimizer after every N-th iteration (default 20)")
    p.add_argument("--hidden", type=int, nargs="*", default=[256, 128], help="hidden layers (default 256 128)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data", default=fashion_mnist.DEFAULT_PATH, help="the Fashion-MNIST folder (IDX .gz files)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cuda: one GPU per rank, NCCL")
    p.add_argument("--threads-per-rank", type=int, default=1)
    p.add_argument("--cores", type=int, nargs="*", help="pin rank r to core cores[r %% len(cores)]")
    p.add_argument("--plain-ddp", action="store_true", help="the baseline: equal batches, DDP's own averaging")
    p.add_argument("--eq7-hook", action="store_true",
                   help="with --plain-ddp: average through fulcrum_torch's eq. 7 hook at equal weights (its cost)")
    p.add_argument("--init-method", default=None, help="torch.distributed's rendezvous (default: a free local port)")
    p.add_argument("--json-out", help="each rank writes its result to FILE.rankN")
    args = p.parse_args()
    args.torchrun_world = None
    if args.init_method is None:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.init_method = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun: this process is one rank
        args.torchrun_world = int(os.environ["WORLD_SIZE"])
        args.init_method = "env://"
        rank_main(int(os.environ["RANK"]), args)
        return
    mp.spawn(rank_main, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
