"""Each rank's batch, a slice of one global batch drawn the same way on every rank."""

from typing import List, Sequence

import torch


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
