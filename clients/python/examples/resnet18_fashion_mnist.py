#!/usr/bin/env python3
"""Trains torchvision's ResNet-18 on Fashion-MNIST with torch.distributed under fulcrumd.

A real training loop: torchvision's FashionMNIST dataset class (fed from Debian's IDX files,
dataset-fashion-mnist), a DataLoader with worker processes that prefetch, SGD with momentum
and weight decay under a cosine LR schedule, BatchNorm, and mixed precision (float16
autocast with a gradient scaler) on CUDA. fulcrumd sizes every rank's batch (LB-BSP) and
plans far enough ahead for the loader's prefetching; eq. 7 weights the gradients in DDP's
all-reduce; the job's least batch of 2 keeps BatchNorm from ever meeting a batch of one.

    fulcrumd --data-dir /tmp/fulcrum --no-demo &        # prints its address and token file
    python3 clients/python/examples/resnet18_fashion_mnist.py \\
        --server ws://127.0.0.1:7480 --token-file /tmp/fulcrum/tokens --ranks 2 --epochs 1

Each rank is a process of this script (torch.multiprocessing) unless torchrun started it
(RANK and WORLD_SIZE set; on Debian 12's torchrun add `--redirects 9:0 --tee 9:0`, see
clients/python/README.md). ResNet-18's first layer takes Fashion-MNIST's one channel with a
3x3 convolution of stride 1 (its max-pool kept, so layer 1 runs at 14x14), and its head
gives the 10 classes.
"""

import argparse
import gzip
import json
import math
import os
import shutil
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import fulcrum_torch  # noqa: E402
from fulcrum_torch import fashion_mnist  # noqa: E402

# Fashion-MNIST's training images: mean and deviation of pixels / 255.
MEAN, STD = 0.2860, 0.3530
IDX_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def stage_idx_files(debian_folder: str, root: str) -> str:
    """torchvision's FashionMNIST reads ROOT/FashionMNIST/raw/ uncompressed: unpack Debian's
    gzip IDX files there once (download=False: nothing is fetched)."""
    raw = os.path.join(root, "FashionMNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for name in IDX_FILES:
        target = os.path.join(raw, name)
        if os.path.exists(target):
            continue
        source = os.path.join(debian_folder, name + ".gz")
        if not os.path.exists(source):
            sys.exit(f"{source}: missing; install dataset-fashion-mnist (or pass --data)")
        partial = target + f".{os.getpid()}"
        with gzip.open(source, "rb") as src, open(partial, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(partial, target)  # atomic: ranks staging at once never read half a file
    return root


def datasets(root: str):
    import torchvision
    from torchvision import transforms
    pipeline = transforms.Compose([transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,))])
    train = torchvision.datasets.FashionMNIST(root, train=True, download=False, transform=pipeline)
    test = torchvision.datasets.FashionMNIST(root, train=False, download=False, transform=pipeline)
    return train, test


def resnet18() -> torch.nn.Module:
    import torchvision
    model = torchvision.models.resnet18(num_classes=10)
    model.conv1 = torch.nn.Conv2d(1, 64, kernel_size=3, stride=1, padding=1, bias=False)
    return model


def half(device: torch.device) -> torch.dtype:
    """Autocast's type: float16 on CUDA; torch 1.13 takes only bfloat16 on the CPU (where
    this example does not autocast), even to set up a disabled autocast."""
    return torch.float16 if device.type == "cuda" else torch.bfloat16


def evaluate(model, loader, device, amp: bool):
    model.eval()
    correct, loss, seen = 0, 0.0, 0
    with torch.no_grad(), torch.autocast(device.type, dtype=half(device), enabled=amp):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            out = model(x)
            loss += F.cross_entropy(out.float(), y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            seen += len(y)
    model.train()
    return correct / seen, loss / seen


def rank_main(rank: int, args) -> None:
    world = args.torchrun_world or args.ranks
    torch.set_num_threads(args.threads_per_rank)
    if args.cores:
        os.sched_setaffinity(0, {args.cores[rank % len(args.cores)]})
    local_rank = int(os.environ.get("LOCAL_RANK", rank))  # torchrun: the rank on this node
    device = torch.device(f"cuda:{local_rank % max(1, torch.cuda.device_count())}" if args.device == "cuda" else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    amp = device.type == "cuda"
    prefetch = args.loader_workers * args.prefetch_factor  # fulcrumd plans at most 16 ahead
    scenario = fulcrum_torch.external_scenario(
        args.name, world, args.total_batch, args.iterations, policy={"type": args.policy},
        eval_interval=args.iterations, rank_timeout_s=args.rank_timeout, plan_ahead=prefetch if prefetch else 0,
        min_batch=2, samples_per_epoch=fashion_mnist.TRAIN_SAMPLES)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", init_method=args.init_method,
                            rank=rank, world_size=world, timeout=fulcrum_torch.process_group_timeout(scenario))
    train_set, test_set = datasets(stage_idx_files(args.data, args.cache))
    torch.manual_seed(args.seed)  # the same initial parameters on every rank
    model = resnet18().to(device)
    token = fulcrum_torch.read_token_file(args.token_file, "operator") if args.token_file else os.environ["FULCRUM_TOKEN"]
    with fulcrum_torch.FulcrumClient(args.server, token, name=f"resnet18 rank {rank}") as client:
        job = fulcrum_torch.ExternalJob(client, rank, scenario=scenario, job=args.job)
        if rank == 0:
            print(f"job {job.job}: ResNet-18, {world} ranks, {args.iterations} iterations of {args.total_batch} "
                  f"samples (fulcrumctl watch {job.job})", flush=True)
        ddp = job.distribute(model, device)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.iterations)
        scaler = torch.cuda.amp.GradScaler(enabled=amp)
        sampler = fulcrum_torch.FulcrumBatchSampler(job, len(train_set), seed=args.seed)
        loader = torch.utils.data.DataLoader(
            train_set, batch_sampler=sampler, num_workers=args.loader_workers, pin_memory=amp,
            **({"prefetch_factor": args.prefetch_factor, "persistent_workers": True} if args.loader_workers else {}))
        started, losses = time.perf_counter(), []
        try:
            for step, (x, y) in zip(job.steps(sampler=sampler), loader):
                with step:
                    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                    optimizer.zero_grad(set_to_none=True)
                    with torch.autocast(device.type, dtype=half(device), enabled=amp):
                        loss = F.cross_entropy(ddp(x), y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                    schedule.step()
                    step.loss = loss
                if not step.excluded:
                    losses.append(loss.item())
                if rank == 0 and args.progress and step.iteration % args.progress == 0:
                    print(f"iteration {step.iteration}: loss {losses[-1] if losses else float('nan'):.4f}, "
                          f"sizes {step.sizes}", flush=True)
        except fulcrum_torch.FulcrumError as e:  # a peer was lost mid all-reduce: say which, and end
            print(f"rank {rank}: {e}", file=sys.stderr, flush=True)
            os._exit(3)  # the process group cannot be torn down with a peer gone
        train_s = time.perf_counter() - started
        state = job.plan["state"]
        if rank == 0:
            if args.test_samples:  # a quick check (CI) evaluates the first N test images only
                test_set = torch.utils.data.Subset(test_set, range(min(args.test_samples, len(test_set))))
            test_loader = torch.utils.data.DataLoader(test_set, batch_size=500, num_workers=args.loader_workers)
            accuracy, test_loss = evaluate(model, test_loader, device, amp)
            print(f"rank 0: {state} after {args.iterations} iterations ({args.iterations * args.total_batch / 60000:.2f}"
                  f" epochs) in {train_s:.1f} s, test accuracy {accuracy:.4f} (loss {test_loss:.4f}), "
                  f"last training loss {losses[-1] if losses else float('nan'):.4f}", flush=True)
            if args.json_out:
                with open(args.json_out, "w", encoding="utf-8") as f:
                    json.dump({"job": job.job, "state": state, "iterations": args.iterations, "train_s": train_s,
                               "test_accuracy": accuracy, "test_loss": test_loss}, f)
    sys.stdout.flush()
    sys.stderr.flush()
    # torch 1.13: destroying a DDP model with a Python comm hook can deadlock at exit.
    os._exit(0 if state == "finished" else 3)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.environ.get("FULCRUM_SERVER", "ws://127.0.0.1:7480"))
    p.add_argument("--token-file", help="fulcrumd's token file (default: $FULCRUM_TOKEN holds the token)")
    p.add_argument("--ranks", type=int, default=2, help="processes to start (not under torchrun)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--epochs", type=float, default=1.0, help="passes over the 60,000 training images")
    p.add_argument("--iterations", type=int, help="instead of --epochs")
    p.add_argument("--total-batch", type=int, default=256, help="X: the samples of one iteration over all ranks")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--policy", default="lbbsp-cpu", help="fulcrumd's batch-size policy (lbbsp-gpu on GPUs)")
    p.add_argument("--loader-workers", type=int, default=2, help="DataLoader worker processes per rank")
    p.add_argument("--prefetch-factor", type=int, default=2)
    p.add_argument("--threads-per-rank", type=int, default=1)
    p.add_argument("--cores", type=int, nargs="*", help="pin rank r to core cores[r %% len(cores)]")
    p.add_argument("--data", default=fashion_mnist.DEFAULT_PATH, help="the folder of Debian's IDX files")
    p.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "fulcrum"),
                   help="where the IDX files are unpacked for torchvision")
    p.add_argument("--test-samples", type=int, default=0, help="evaluate on the first N test images (0: all 10,000)")
    p.add_argument("--rank-timeout", type=float, default=120)
    p.add_argument("--name", default="resnet18-fashion-mnist")
    p.add_argument("--job", type=int, help="join this job instead of submitting one (rank 0 submits)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--progress", type=int, default=20, help="rank 0 prints every this many iterations (0: never)")
    p.add_argument("--init-method", help="torch.distributed's (default: a free port on loopback)")
    p.add_argument("--json-out", help="rank 0 writes its figures here")
    args = p.parse_args()
    if args.loader_workers * args.prefetch_factor > 16:
        p.error(f"--loader-workers x --prefetch-factor is {args.loader_workers * args.prefetch_factor}: the loader "
                "would ask for more batches ahead than fulcrumd plans (external.plan_ahead, at most 16)")
    if args.iterations is None:
        args.iterations = max(1, math.ceil(args.epochs * fashion_mnist.TRAIN_SAMPLES / args.total_batch))
    args.torchrun_world = None
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun: this process is one rank
        args.torchrun_world = int(os.environ["WORLD_SIZE"])
        args.init_method = "env://"
        rank_main(int(os.environ["RANK"]), args)
        return
    if args.init_method is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.init_method = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    mp.spawn(rank_main, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
