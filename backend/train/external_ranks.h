#pragma once

#include "common/named_values.h"
#include "common/records.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fulcrum::train {

// What one rank of an external framework job (a torch.distributed process running
// fulcrum_torch) measured in one iteration and reports to fulcrumd.
struct RankReport {
    std::int64_t iteration = 0;
    std::int32_t batch_size = 0;
    double compute_s = 0; // forward and backward on its batch
    double sync_s = 0; // the gradient all-reduce: communication plus waiting for slower ranks
    double cpu_share = 1; // its CPU time over its compute time
    double memory_share = 1; // available memory on its host
    std::optional<double> gpu_memory_gb; // device memory in use, when it trains on a GPU
    double loss = 0; // mean training loss on its batch
    // An evaluation of the model after this iteration (one rank makes it).
    std::optional<double> test_accuracy, test_loss;
    std::optional<std::int64_t> resume_from; // the ready report of a restarted group
};

// What fulcrumd answers a rank: the next iteration to train, or why there is none.
struct RankPlan {
    enum class State { Train, Finished, Stopped, Lost };
    State state = State::Train;
    std::int64_t iteration = 0;
    // Every rank's batch size (0: excluded, it contributes a zero-weighted gradient), so each
    // rank takes its own slice of the same global batch.
    std::vector<std::int32_t> batch_sizes;
    // An injected straggler's factor per rank (1: none): the rank sleeps (f - 1) x its compute.
    std::vector<double> slowdowns;
    // The batch sizes of the iterations after this one, as planned (the job's plan_ahead).
    std::vector<std::vector<std::int32_t>> ahead;
    std::string message; // why it ended
};

// The ranks' reports of one iteration, gathered at fulcrumd's barrier.
struct GatheredReports {
    std::vector<RankReport> reports; // one per rank, in rank order (when neither lost nor stopped)
    std::vector<WorkerId> lost; // ranks that went away (connection closed) or timed out
    std::string lost_why;
    bool stopped = false;
    // Ranks newly stalled (gather's `stall_limits_s`), with the seconds since their plan; the
    // gather is not over: the trainer records them and gathers on.
    std::vector<std::pair<WorkerId, double>> stalled;
};

// The ranks of an external job, as the trainer sees them: fulcrumd's RankPool delivers
// each rank's report and sends it its plan. Thread-safe.
class ExternalRanks {
public:
    virtual ~ExternalRanks() = default;
    // Blocks until every rank has reported `iteration` (-1: is ready to start), a rank is
    // lost, `stop` is set, or a rank stalls: one that has neither reported nor said it waits
    // in its framework's collective `stall_limits_s[rank]` seconds after its plan (0: never),
    // reported once per iteration (issue 42).
    virtual GatheredReports gather(
        std::int64_t iteration, const std::atomic<bool>* stop, const std::vector<double>& stall_limits_s)
        = 0;
    // Sends every rank the plan of its next iteration (state Train).
    virtual void answer(const RankPlan& plan) = 0;
    // The job is over: each rank waiting for a plan, and any that reports later, gets `plan`.
    virtual void finish(const RankPlan& plan) = 0;
};

inline constexpr NameTable<RankPlan::State, 4> kRankPlanStates { {
    { RankPlan::State::Train, "train" },
    { RankPlan::State::Finished, "finished" },
    { RankPlan::State::Stopped, "stopped" },
    { RankPlan::State::Lost, "lost" },
} };
std::string_view to_string(RankPlan::State state);

// An external job lost a rank: its framework's process group cannot go on without it. The
// job ends with this after every other rank was told; its rows stay recorded.
class RankLost : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace fulcrum::train
