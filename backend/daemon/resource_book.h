#pragma once

// fulcrumd's admission by resources: the memory and threads each running job holds, as
// estimated from its scenario (scenario/job_footprint.h), against the daemon's budget. A
// job that could never fit is refused at submission; one that fits but not beside the
// running jobs waits in the queue with the reason. Data sets are counted once per daemon:
// the jobs that read one share a single read-only copy (DataCache). Not thread-safe: the
// job queue uses it under its own lock, as it does the cluster book.

#include "common/records.h"

#include <cstdint>
#include <map>
#include <string>

namespace fulcrum::scenario {
struct JobFootprint;
}

namespace fulcrum::daemon {

struct ResourceBudget {
    double memory_bytes = 0; // --memory-budget
    int threads = 2048; // --max-threads
};

// The memory budget fulcrumd takes when none is given: 75 % of the least of the machine's
// memory (MemTotal), its cgroup's limit (memory.max) and the process's RLIMIT_AS and
// RLIMIT_DATA, so that under systemd's MemoryMax or a ulimit the daemon refuses a job
// before the kernel or the allocator refuses it.
double default_memory_budget();

// "6G", "512M", "1.5GiB", "800000000": bytes; throws std::invalid_argument otherwise.
double parse_byte_size(const std::string& text);

class ResourceBook {
public:
    explicit ResourceBook(ResourceBudget budget);

    const ResourceBudget& budget() const { return budget_; }
    // Why a job of this footprint can never run here (over the whole budget), and the
    // scenario field to blame; an empty reason when it can.
    struct Refusal {
        std::string field, why;
    };
    Refusal impossible(const scenario::JobFootprint& f) const;
    // Why it must wait beside the jobs running now, or empty.
    std::string wait_reason(const scenario::JobFootprint& f) const;
    void hold(JobId job, const scenario::JobFootprint& f);
    void release(JobId job); // nothing for a job it does not hold

    double held_bytes() const; // the jobs' own, and each data set they read once
    int held_threads() const;

private:
    // What `f` adds now: its own bytes, and its data set's unless a running job reads it.
    double added_bytes(const scenario::JobFootprint& f) const;

    struct Held {
        double own_bytes = 0, data_bytes = 0;
        std::string data_key;
        int threads = 0;
    };
    ResourceBudget budget_;
    std::map<JobId, Held> held_;
    std::map<std::string, int> data_readers_; // data set key → running jobs reading it
};

} // namespace fulcrum::daemon
