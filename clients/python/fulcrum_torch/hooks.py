"""LB-BSP eq. 7 as a DDP communication hook.

DDP's own hook averages the ranks' gradients: (1/n) sum_i g_i. With batch sizes that
differ, that overweights the small batches. Eq. 7 weights rank i's mean gradient by its
share of the global batch, g = sum_i (x_i / X) g_i, which is the mean gradient of the
union batch: the update one process would make on all the ranks' samples together.
"""

import time
from typing import Callable, Optional

import torch
import torch.distributed as dist


class WeightedAllReduce:
    """The hook's state: this rank's weight x_i / X for the iteration under way, when the
    first gradient bucket was ready (the end of its backward pass, for timing) and when the
    last bucket's all-reduce completed (the end of the sync)."""

    def __init__(self, process_group: Optional[dist.ProcessGroup] = None,
                 on_first_bucket: Optional[Callable[[], None]] = None):
        self.process_group = process_group
        self.weight = 1.0
        self.first_bucket_at: Optional[float] = None
        self.last_reduced_at: Optional[float] = None
        # On a GPU the hook and its callbacks run when the work is queued, not done: CUDA
        # events on the streams time the all-reduce (read after a synchronize).
        self.first_event = None
        self.reduced_event = None
        # Called when the iteration's first bucket enters the all-reduce: train() tells
        # fulcrumd this rank now waits for its peers (FulcrumClient.announce_collective).
        self.on_first_bucket = on_first_bucket

    def start_iteration(self, batch_size: int, total_batch: int) -> None:
        self.weight = batch_size / total_batch if total_batch > 0 else 0.0
        self.first_bucket_at = None
        self.last_reduced_at = None
        self.first_event = None
        self.reduced_event = None


def weighted_allreduce_hook(state: WeightedAllReduce, bucket) -> torch.futures.Future[torch.Tensor]:
    """register_comm_hook(state, weighted_allreduce_hook): eq. 7 through one all-reduce per bucket."""
    tensor = bucket.buffer()
    if state.first_bucket_at is None:
        state.first_bucket_at = time.perf_counter()
        if tensor.is_cuda:
            state.first_event = torch.cuda.Event(enable_timing=True)
            state.first_event.record()
        if state.on_first_bucket is not None:
            state.on_first_bucket()
    tensor.mul_(state.weight)
    work = dist.all_reduce(tensor, group=state.process_group, async_op=True)

    def reduced(fut):
        state.last_reduced_at = time.perf_counter()
        result = fut.value()[0]
        if result.is_cuda:  # the callback's stream waits for the all-reduce: this event follows it
            state.reduced_event = torch.cuda.Event(enable_timing=True)
            state.reduced_event.record()
        return result

    return work.get_future().then(reduced)
