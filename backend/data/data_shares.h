#pragma once

#include "common/records.h"
#include "common/state_archive.h"

#include <cstdint>
#include <map>
#include <vector>

namespace fulcrum::data {

// A contiguous run [begin, end) of training-set indices.
struct SampleRange {
    std::int64_t begin = 0;
    std::int64_t end = 0;

    std::int64_t size() const { return end - begin; }
    bool operator==(const SampleRange&) const = default;
};

// What one membership change moved.
struct ShareChange {
    std::int64_t moved_samples = 0; // handed to another worker as newly active data
    std::int64_t reactivated_samples = 0; // inactive backups switched back on (no data moved)
};

// The Elastic Parameter Server's split of a job's training set over its workers. Each
// worker holds active data (what it samples from) and inactive backups (data it handed to
// a newcomer and kept). Adding a worker to N: each of the N cuts its active data into N
// chunks (about D/N^2 samples for D/N each) and hands the last one to the newcomer, keeping
// it as an inactive backup (a lone worker cuts its data into two). Removing a worker: whoever holds a backup of its
// active data re-activates it, and only data nobody backs up is moved (split evenly over the others). Invariant after
// every change: each sample is active at exactly one member.
class DataShares {
public:
    // Workers 0..workers-1, each with one contiguous, near-equal share of [0, samples).
    DataShares(std::int64_t samples, int workers);

    // `worker` joins; throws std::invalid_argument if it is already a member.
    ShareChange add_worker(WorkerId worker);
    // `worker` leaves; throws std::invalid_argument if it is not a member or is the last.
    ShareChange remove_worker(WorkerId worker);

    bool member(WorkerId worker) const { return active_.contains(worker); }
    std::vector<WorkerId> members() const;
    const std::vector<SampleRange>& active(WorkerId worker) const;
    const std::vector<SampleRange>& backups(WorkerId worker) const;
    std::int64_t samples() const { return samples_; }

    // A checkpoint: every worker's active data and backups.
    void save_state(StateWriter& out) const;
    void load_state(StateReader& in);

private:
    std::int64_t samples_;
    std::map<WorkerId, std::vector<SampleRange>> active_;
    std::map<WorkerId, std::vector<SampleRange>> backups_;
};

// The indices of a set of ranges, in order.
std::vector<std::int64_t> indices_of(const std::vector<SampleRange>& ranges);

} // namespace fulcrum::data
