#!/usr/bin/env python3
"""Side by side in one run: Fulcrum's MLP 784-256-128-10 gradient step against PyTorch's,
on the same Fashion-MNIST data, batch 128, one thread each, in samples per second.

    /usr/bin/python3 bench/torch_compare.py [--build build/release] [--seconds 5]

PyTorch comes from Debian's python3-torch; without it the PyTorch half is skipped and
only Fulcrum's figure is printed (exit status 0).
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

DATA = "/usr/share/datasets/fashion-mnist"


def fulcrum_rate(build, seconds):
    exe = os.path.join(build, "bench", "gradient_throughput")
    out = subprocess.run([exe, "--seconds", str(seconds), "--json"], check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    return result["models"]["mlp"]["samples_per_second"], result["gemm_gflops"]


def load_images():
    import numpy as np
    with gzip.open(os.path.join(DATA, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 784).astype(np.float32) / 255.0
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8).astype(np.int64)
    images = (images - images.mean()) / images.std()
    return images, labels


def torch_rate(seconds):
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(1)
    images, labels = load_images()
    x_all, y_all = torch.from_numpy(images), torch.from_numpy(labels)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(3)
    permutation = torch.randperm(len(x_all), generator=generator)
    samples, cursor = 0, 0
    # The same work per step as Fulcrum's benchmark: gather a batch, forward, backward, step.
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if cursor + 128 > len(permutation):
            permutation, cursor = torch.randperm(len(x_all), generator=generator), 0
        index = permutation[cursor:cursor + 128]
        cursor += 128
        optimizer.zero_grad()
        loss = loss_fn(model(x_all[index]), y_all[index])
        loss.backward()
        optimizer.step()
        samples += 128
    return samples / (time.perf_counter() - start), torch.__version__


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    if not os.path.isdir(DATA):
        print("Fashion-MNIST is missing: apt-get install dataset-fashion-mnist", file=sys.stderr)
        return 2
    ours, gemm = fulcrum_rate(args.build, args.seconds)
    print(f"Fulcrum  mlp-784-256-128-10, batch 128, 1 thread: {ours:10.0f} samples/s")
    try:
        theirs, version = torch_rate(args.seconds)
    except ImportError:
        print("PyTorch: skipped (python3-torch is not installed)")
        return 0
    print(f"PyTorch {version} same model, data, batch, 1 thread: {theirs:10.0f} samples/s")
    print(f"ratio Fulcrum / PyTorch: {ours / theirs:.2f} (target >= 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
