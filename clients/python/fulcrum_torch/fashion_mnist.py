"""Fashion-MNIST from Debian's dataset-fashion-mnist (IDX files, gzip), standardised as
fulcrumd's own loader does: pixels / 255, then the training set's mean and deviation."""

import gzip
import os
import struct
from typing import Tuple

import torch

DEFAULT_PATH = "/usr/share/datasets/fashion-mnist"
TRAIN_SAMPLES = 60000  # the training set's images: one epoch


def _idx(path: str) -> torch.Tensor:
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise FileNotFoundError(f"{path}: cannot read the IDX file ({e}); install dataset-fashion-mnist") from e
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes")
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    body = data[4 + 4 * dims:]
    expected = 1
    for d in shape:
        expected *= d
    if len(body) != expected:
        raise ValueError(f"{path}: holds {len(body)} values, its header says {expected}")
    return torch.frombuffer(bytearray(body), dtype=torch.uint8).reshape(shape)


def load(path: str = DEFAULT_PATH) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(train images N x 784 float, train labels, test images, test labels)."""
    def part(name: str) -> torch.Tensor:
        return _idx(os.path.join(path, name))
    train_x = part("train-images-idx3-ubyte.gz").reshape(-1, 784).float() / 255
    test_x = part("t10k-images-idx3-ubyte.gz").reshape(-1, 784).float() / 255
    mean, std = train_x.mean(), train_x.std()
    return ((train_x - mean) / std, part("train-labels-idx1-ubyte.gz").long(),
            (test_x - mean) / std, part("t10k-labels-idx1-ubyte.gz").long())
