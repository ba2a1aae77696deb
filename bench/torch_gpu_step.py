#!/usr/bin/env python3
"""PyTorch's training step for an MLP on one CUDA GPU, in samples per second, for side by
side comparison with Fulcrum's bench/gpu_step (scripts/gpu-check.sh runs both).

    python3 bench/torch_gpu_step.py [--layers 784,256,128,10] [--batch 128] [--seconds 3] [--json] [--device cpu]

The data are random and resident on the GPU, as in gpu_step; each step gathers a batch,
runs forward and backward and an SGD step (FP32, TF32 off). Exits 0 with "skipped" where
torch or a CUDA device is missing. --device cpu times the CPU instead (scripts/gpu-check.sh
--dry-run checks its plumbing that way).
"""
import argparse
import json
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", default="784,256,128,10")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("skipped: PyTorch is not installed")
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        print("skipped: PyTorch sees no CUDA device")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sizes = [int(s) for s in args.layers.split(",")]
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    device = torch.device("cuda:0" if args.device == "cuda" else "cpu")
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    samples = 8192
    x = torch.randn(samples, sizes[0], device=device)
    y = torch.randint(0, sizes[-1], (samples,), device=device)
    index = torch.arange(args.batch, device=device)

    def synchronize():
        if args.device == "cuda":
            torch.cuda.synchronize()

    def step(k):
        batch = (index * 7 + k * args.batch) % samples
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[batch]), y[batch])
        loss.backward()
        optimizer.step()

    for k in range(10):  # warm-up: kernels chosen, memory pooled
        step(k)
    synchronize()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        step(steps)
        steps += 1
        if steps % 20 == 0:
            synchronize()
    synchronize()
    rate = steps * args.batch / (time.perf_counter() - start)
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    if args.json:
        print(json.dumps({"torch": torch.__version__, "device": name, "samples_per_s": rate}))
    else:
        print(f"PyTorch {torch.__version__} on {name}: mlp-{args.layers.replace(',', '-')}, batch {args.batch}: "
              f"{rate:.0f} samples/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
