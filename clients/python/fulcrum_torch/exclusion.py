"""What an excluded rank (batch size 0) runs, so that every model trains through it.

DDP's all-reduce needs every rank's gradient, so an excluded rank still runs a forward and
backward pass, with weight 0 in the eq. 7 hook (`WeightedAllReduce`). It runs them on two
samples, not one: BatchNorm refuses a batch of one value per channel in training. And it
runs them with every BatchNorm's running statistics held: a zero-weighted batch must not
move the running mean and variance that evaluation uses (nor, through DDP's buffer
broadcast from rank 0, the other ranks').
"""

import contextlib
from typing import Iterator, List, Tuple

import torch

# Two distinct samples: BatchNorm needs more than one value per channel, and the same sample
# twice would give it a variance of 0.
EXCLUDED_SAMPLES = 2


def excluded_indices(dataset_size: int) -> torch.Tensor:
    """The indices an excluded rank computes on (weighted 0)."""
    return torch.arange(min(EXCLUDED_SAMPLES, dataset_size), dtype=torch.long)


@contextlib.contextmanager
def held_batch_norm(model: torch.nn.Module, hold: bool = True) -> Iterator[None]:
    """Within it, the BatchNorm layers of `model` normalise by the batch as in training but
    leave their running statistics (and their batch count) as they were."""
    if not hold:
        yield
        return
    saved: List[Tuple[torch.nn.modules.batchnorm._BatchNorm, object, torch.Tensor]] = []
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.track_running_stats:
            tracked = m.num_batches_tracked.clone() if m.num_batches_tracked is not None else None
            saved.append((m, m.momentum, tracked))
            m.momentum = 0.0  # running = (1 - 0) * running + 0 * batch
    try:
        yield
    finally:
        for m, momentum, tracked in saved:
            m.momentum = momentum
            if tracked is not None:
                m.num_batches_tracked.copy_(tracked)


__all__ = ["EXCLUDED_SAMPLES", "excluded_indices", "held_batch_norm"]
