"""Each rank's batch, a slice of one global batch drawn the same way on every rank."""

from typing import List, Sequence

import torch

from .exclusion import excluded_indices


class GlobalBatchSlicer:
    """A seeded pass over a shared dataset of `size` samples. Every rank holds one and is
    given the same batch sizes each iteration (fulcrumd sends every rank the whole
    allocation), so every rank draws the same global batch of X = sum(sizes) indices and
    takes its own slice: the ranks' batches are disjoint and their union is the global
    batch. A new permutation (seed + epoch) starts when one is used up."""

    def __init__(self, size: int, seed: int = 1):
        if size <= 0:
            raise ValueError(f"the dataset is empty (size {size})")
        self.size = size
        self.seed = seed
        self.epoch = 0
        self.samples_seen = 0
        self._order = self._permutation(0)
        self._cursor = 0

    def _permutation(self, epoch: int) -> torch.Tensor:
        generator = torch.Generator()
        generator.manual_seed(self.seed + epoch)
        return torch.randperm(self.size, generator=generator)

    def next_global(self, total: int) -> torch.Tensor:
        """The next `total` indices of the pass, across an epoch boundary if need be."""
        parts: List[torch.Tensor] = []
        while total > 0:
            if self._cursor == self.size:
                self.epoch += 1
                self._order = self._permutation(self.epoch)
                self._cursor = 0
            take = min(total, self.size - self._cursor)
            parts.append(self._order[self._cursor:self._cursor + take])
            self._cursor += take
            total -= take
        self.samples_seen += sum(len(p) for p in parts)
        return torch.cat(parts) if parts else torch.empty(0, dtype=torch.long)

    def next_slice(self, batch_sizes: Sequence[int], rank: int) -> torch.Tensor:
        """This rank's indices of the next global batch."""
        if not 0 <= rank < len(batch_sizes):
            raise ValueError(f"rank {rank} is not one of the {len(batch_sizes)} ranks")
        global_batch = self.next_global(int(sum(batch_sizes)))
        start = int(sum(batch_sizes[:rank]))
        return global_batch[start:start + int(batch_sizes[rank])]


class FulcrumBatchSampler:
    """A DataLoader's `batch_sampler` for an external job: it yields this rank's indices of
    each planned iteration's global batch, in order, at the sizes fulcrumd planned, so a
    DataLoader with worker processes can load batches ahead of the training loop.

        sampler = fulcrum_torch.FulcrumBatchSampler(job, len(dataset), seed=1)
        loader = DataLoader(dataset, batch_sampler=sampler, num_workers=2, prefetch_factor=2)
        for step, (x, y) in zip(job.steps(sampler=sampler), loader):
            with step:
                ...

    A DataLoader asks for num_workers x prefetch_factor batches beyond the one the loop
    holds, so the job's external.plan_ahead (`external_scenario(..., plan_ahead=...)`) must
    be at least that; asked further ahead than fulcrumd has planned, the sampler raises an
    error that says so. An excluded rank's batch is `excluded_indices` (weighted 0)."""

    def __init__(self, job, dataset_size: int, seed: int = 1):
        self.job = job
        self.slicer = GlobalBatchSlicer(dataset_size, seed)
        self._next = int(job.plan["iteration"]) if job.plan.get("state") == "train" else 0
        self._given = {}

    def __len__(self) -> int:
        return max(0, int(getattr(self.job, "iterations", 0)) - self._next)

    def __iter__(self):
        while True:
            k = self._next
            if self.job.iterations and k >= self.job.iterations:
                return
            sizes = self.job.planned_sizes(k)
            if sizes is None:
                if self.job.plan.get("state") != "train":
                    return
                known = int(self.job.plan["iteration"]) + len(self.job.plan.get("ahead", []))
                raise RuntimeError(
                    f"the DataLoader asked for iteration {k}'s batch, but fulcrumd has planned up to iteration "
                    f"{known}: set the job's external.plan_ahead (now {known - int(self.job.plan['iteration'])}) "
                    f"to at least the DataLoader's num_workers x prefetch_factor")
            mine = self.slicer.next_slice(sizes, self.job.rank)  # drawn on every rank, excluded or not
            indices = excluded_indices(self.slicer.size) if sizes[self.job.rank] == 0 else mine
            self._given[k] = indices
            self._next = k + 1
            yield indices.tolist()

    def indices_of(self, iteration: int) -> torch.Tensor:
        """The indices this sampler gave the DataLoader for `iteration`."""
        if iteration not in self._given:
            raise RuntimeError(f"the DataLoader has not asked for iteration {iteration}'s batch yet")
        return self._given[iteration]

    def forget_through(self, iteration: int) -> None:
        """The steps up to `iteration` are done: their indices are not asked again."""
        for k in [k for k in self._given if k <= iteration]:
            del self._given[k]
