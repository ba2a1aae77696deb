"""A rank's own training loop under fulcrumd, one `Step` per iteration.

    ddp = job.distribute(model)                   # DDP with eq. 7's hook
    for step in job.steps(len(dataset)):          # until fulcrumd's plan says the job ended
        with step:                                # times it, reports it, gets the next plan
            x, y = collate(dataset, step.indices) # this rank's slice of the global batch
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = loss_fn(ddp(x), y)
            scaler.scale(loss).backward()         # the all-reduce, eq. 7-weighted
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step.loss = loss
            if rank == 0 and step.iteration % 100 == 99:
                with step.evaluation():           # not counted as compute; fulcrumd is told
                    step.measured["test_accuracy"], step.measured["test_loss"] = evaluate(model)

Any optimizer, LR scheduler, AMP and gradient clipping fit: eq. 7's weights are applied to
the gradients inside the all-reduce, which is linear, so a loss scale or a clip afterwards
sees the union batch's gradient. An excluded rank's step (`step.excluded`, batch 0) runs
the same code on `excluded_indices` with its BatchNorm statistics held, weighted 0.
"""

import contextlib
import time
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

import torch

from .exclusion import excluded_indices, held_batch_norm
from .hooks import WeightedAllReduce
from .sampler import FulcrumBatchSampler, GlobalBatchSlicer

if TYPE_CHECKING:  # pragma: no cover
    from .train import ExternalJob


def memory_share() -> float:
    """MemAvailable / MemTotal of this host (1 where /proc/meminfo is missing)."""
    try:
        fields = {}
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                key, value = line.split(":", 1)
                fields[key] = float(value.split()[0])
        return max(0.0, min(1.0, fields["MemAvailable"] / fields["MemTotal"]))
    except (OSError, KeyError, ValueError, ZeroDivisionError):
        return 1.0


class RankTimer:
    """Wall and CPU time of a stretch of work: the CPU share is this process's CPU time over
    the wall time and its threads (1: it had the cores it asked for)."""

    def start(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def cpu_share(self, until_wall: float) -> float:
        wall = until_wall - self.wall
        if wall <= 0:
            return 1.0
        return max(0.0, min(1.0, (time.process_time() - self.cpu) / wall / max(1, torch.get_num_threads())))


def collective_error(error: BaseException, in_collective: bool) -> bool:
    """Whether `error` may have come from a torch.distributed collective (a peer gone, a
    process-group timeout), as against the loop's own code: only then is fulcrumd asked why
    (which can take the worker timeout). Any RuntimeError once this rank's all-reduce began;
    before it (DDP's buffer broadcast at the forward), torch.distributed's own error types or
    a gloo or NCCL message."""
    distributed_error = getattr(torch.distributed, "DistError", None)  # torch >= 2.1
    if distributed_error is not None and isinstance(error, distributed_error):
        return True
    if not isinstance(error, RuntimeError):
        return False
    text = str(error).lower()
    return in_collective or "gloo" in text or "nccl" in text


class Step:
    """One iteration of this rank: what fulcrumd planned, and, as a context manager, the
    timing and the report. Set `loss` (a tensor or a float) in the body, and any other
    measured field in `measured` (test_accuracy, test_loss, gpu_memory_gb)."""

    def __init__(self, job: "ExternalJob", state: WeightedAllReduce, slicer: Optional[GlobalBatchSlicer],
                 model: Optional[torch.nn.Module], device: Optional[torch.device], last_compute_s: float,
                 sampler: Optional[FulcrumBatchSampler] = None):
        plan = job.plan
        self.job = job
        self.plan = plan
        self.iteration = int(plan["iteration"])
        self.sizes: List[int] = [int(x) for x in plan["batch_sizes"]]
        self.batch_size = self.sizes[job.rank]
        self.excluded = self.batch_size == 0
        self._sampler = sampler
        self._indices: Optional[torch.Tensor] = None
        if sampler is None:  # drawn on every rank, excluded or not, so the ranks' slicers stay in step
            mine = slicer.next_slice(self.sizes, job.rank)
            self._indices = excluded_indices(slicer.size) if self.excluded else mine
        self.slowdown = float(plan.get("slowdowns", [1.0] * len(self.sizes))[job.rank])
        self.loss: Any = 0.0
        self.measured: Dict[str, Any] = {}
        self.compute_s = 0.0
        self.sync_s = 0.0
        self.report_s = 0.0
        self._state = state
        self._model = model
        self._device = device
        self._last_compute_s = last_compute_s
        self._timer = RankTimer()
        self._hold = contextlib.ExitStack()
        self._evaluated_s = 0.0

    @property
    def indices(self) -> torch.Tensor:
        """This rank's sample indices: its slice of the global batch, or, excluded, the two
        samples it computes on with weight 0. With a DataLoader's FulcrumBatchSampler, the
        ones it gave the DataLoader (asked for once the loader has yielded the batch)."""
        if self._indices is None:
            self._indices = self._sampler.indices_of(self.iteration)
        return self._indices

    def __enter__(self) -> "Step":
        self._state.start_iteration(self.batch_size, sum(self.sizes))
        if self._model is not None:
            self._hold.enter_context(held_batch_norm(self._model, hold=self.excluded))
        self._timer.start()
        if self.slowdown > 1 and not self.excluded:  # an operator's injected straggler, for drills
            time.sleep((self.slowdown - 1) * self._last_compute_s)
        return self

    @contextlib.contextmanager
    def evaluation(self):
        """An evaluation inside the step: not counted as compute, and announced to fulcrumd
        (ExternalJob.evaluating), so a long one does not lose the rank."""
        began = time.perf_counter()
        try:
            with self.job.evaluating():
                yield
        finally:
            self._evaluated_s += time.perf_counter() - began

    def __exit__(self, kind, error, traceback) -> bool:
        self._hold.close()
        if error is not None:
            if collective_error(error, self._state.first_bucket_at is not None):
                reason = self.job.why_collective_failed()
                if reason:
                    raise reason from error
            return False
        if self._device is not None and self._device.type == "cuda":
            torch.cuda.synchronize(self._device)
        end = time.perf_counter()
        first = self._state.first_bucket_at or end
        reduced = max(first, self._state.last_reduced_at or first)
        # Forward and backward up to the first bucket, and what follows the all-reduce (the
        # optimizer's step, a clip): a rank slowed in one is slowed in the other, and the
        # barrier waits for both. The all-reduce is the sync; an evaluation is neither.
        if self._state.first_event is not None and self._state.reduced_event is not None:
            # A GPU: the host only queued the work; its streams say when the all-reduce ran.
            self.sync_s = max(0.0, self._state.first_event.elapsed_time(self._state.reduced_event) / 1000)
            self.compute_s = max(0.0, (end - self._timer.wall) - self.sync_s - self._evaluated_s)
        else:
            self.sync_s = reduced - first
            self.compute_s = max(0.0, (first - self._timer.wall) + (end - reduced) - self._evaluated_s)
        loss = self.loss
        measured: Dict[str, Any] = {
            "batch_size": self.batch_size, "compute_s": self.compute_s, "sync_s": self.sync_s,
            "cpu_share": self._timer.cpu_share(first), "memory_share": memory_share(),
            "loss": 0.0 if self.excluded else float(loss.item() if hasattr(loss, "item") else loss),
        }
        if self._device is not None and self._device.type == "cuda":
            measured["gpu_memory_gb"] = torch.cuda.memory_allocated(self._device) / 1e9
        measured.update(self.measured)
        sent = time.perf_counter()
        self.job.report(self.iteration, **measured)
        self.report_s = time.perf_counter() - sent
        return False


def iterate_steps(job: "ExternalJob", state: WeightedAllReduce, dataset_size: int, seed: int,
                  model: Optional[torch.nn.Module], device: Optional[torch.device],
                  sampler: Optional[FulcrumBatchSampler] = None) -> Iterator[Step]:
    """Steps until fulcrumd's plan says the job ended (job.plan["state"] then says how)."""
    slicer = GlobalBatchSlicer(dataset_size, seed) if sampler is None else None
    last_compute_s = 0.0
    while job.plan["state"] == "train":
        step = Step(job, state, slicer, model, device, last_compute_s, sampler)
        yield step
        if step.plan is job.plan:
            raise RuntimeError(f"step {step.iteration} was never reported: run each step in a `with step:` block, "
                               f"and let an error in it end the loop (fulcrumd waits for every rank's report)")
        last_compute_s = step.compute_s
        if sampler is not None:
            sampler.forget_through(step.iteration)


__all__ = ["RankTimer", "Step", "collective_error", "iterate_steps", "memory_share"]
