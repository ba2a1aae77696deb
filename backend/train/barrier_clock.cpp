#include "train/barrier_clock.h"

#include "perf/network_model.h"
#include "perf/proc_stats.h"
#include "train/job_core.h"
#include "train/modelled_timing.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace fulcrum::train {

namespace {

// Virtual and paced modes: batch times from the performance models, arrivals through the
// event queue, so a run is the same on any machine and any number of threads.
class ModelledBarrierClock final : public BarrierClock {
public:
    ModelledBarrierClock(JobCore& core, std::vector<double>& device_memory)
        : core_(core)
        , device_memory_(device_memory)
    {
    }

    std::size_t compute_threads() const override
    {
        const int workers = static_cast<int>(core_.job().workers.size());
        const int threads = core_.config().threads > 0 ? core_.config().threads
                                                       : static_cast<int>(std::thread::hardware_concurrency());
        return static_cast<std::size_t>(std::clamp(threads, 1, std::max(1, workers)));
    }

    double dispatch(double now) const override { return now; }
    double endpoint_slowdown(double /*slowdown*/) const override { return 1; }

    // With backup workers the later batches are abandoned at the barrier and the next
    // iteration starts there: the late workers get the new parameters with everyone else.
    double close_barrier(std::vector<IterationRecord>& rows, std::vector<BarrierTask>& tasks, double /*dispatched*/,
        std::int64_t iteration, std::size_t needed, const std::atomic<bool>* stop) override
    {
        engine::EventQueue& clock = core_.clock();
        const double barrier_open = clock.now();
        double barrier_close = barrier_open;
        std::size_t arrived = 0;
        // Each worker's pull and push alone on its link, then as the link has them.
        CommTransfer transfer { barrier_open, static_cast<double>(core_.job().model_bytes), {}, {} };
        const auto pushes = static_cast<int>(rows.size());
        const auto shards = static_cast<int>(core_.job().server.shards().size());
        for (const IterationRecord& row : rows) {
            transfer.workers.push_back(row.worker);
            transfer.alone_s.push_back(perf::barrier_communication_time(
                core_.job().workers[static_cast<std::size_t>(row.worker)]->setup().network, core_.config().server_links,
                core_.job().model_bytes, iteration, pushes, shards));
        }
        const std::optional<CommGrant> grant = ask_for_links(core_, transfer, stop);
        for (std::size_t r = 0; r < rows.size(); ++r) {
            IterationRecord& row = rows[r];
            const auto i = static_cast<std::size_t>(row.worker);
            row.start_s = barrier_open;
            device_memory_[i] = time_modelled_batch(core_, row, i, barrier_open, transfer.alone_s[r], grant, r);
            clock.schedule(row.end_s, [&, end = row.end_s] {
                if (++arrived == needed)
                    barrier_close = end; // the queue runs arrivals in time order
            });
        }
        while (arrived < needed && clock.step()) { }
        if (arrived < needed)
            throw std::logic_error("the barrier never closed");
        clock.discard_pending();
        if (paced_in_wall_time(core_))
            return pace_through(rows, tasks, needed, barrier_close, stop);
        return barrier_close;
    }

    perf::ResourceShare next_share(const IterationRecord& row, double barrier) const override
    {
        return core_.job().workers[static_cast<std::size_t>(row.worker)]->performance().share_at(barrier);
    }

    void after_barrier(double now, const std::atomic<bool>* stop) override { pace_to(core_, now, stop); }

private:
    // The paced clock waits for the wall clock to reach the barrier before the rows are final,
    // so that an operator's exclusion or removal of a worker whose modelled batch is still
    // under way releases the barrier at that instant, as in the real mode (issue 42 item 2):
    // its batch is given up ("dropped: excluded") and the barrier closes at the later of that
    // instant and the arrivals it still needs.
    double pace_through(std::vector<IterationRecord>& rows, std::vector<BarrierTask>& tasks, std::size_t needed,
        double barrier, const std::atomic<bool>* stop)
    {
        engine::Pacer& pacer = core_.pacer();
        BatchRelease& release = *core_.job().release;
        std::vector<WorkerId> under_way;
        for (;;) {
            under_way.clear();
            const double now = pacer.now();
            for (const IterationRecord& row : rows)
                if (!tasks[static_cast<std::size_t>(row.worker)].batch.lost && row.end_s > now)
                    under_way.push_back(row.worker);
            const std::optional<WorkerId> gone = release.wait_for_give_up(under_way, pacer.due(barrier), stop);
            if (!gone) {
                // The event queue ran to the given-up batch's arrival: the run clock goes on
                // from the barrier instead (nothing is pending, the batch abandoned).
                core_.clock().restore(barrier);
                return barrier;
            }
            tasks[static_cast<std::size_t>(*gone)].batch.lost = RemoteLoss { RemoteLoss::Kind::Excluded };
            std::vector<double> arrivals;
            for (const IterationRecord& row : rows)
                if (!tasks[static_cast<std::size_t>(row.worker)].batch.lost)
                    arrivals.push_back(row.end_s);
            std::sort(arrivals.begin(), arrivals.end());
            const double released = pacer.now();
            barrier = arrivals.empty() ? released : std::max(released, arrivals[std::min(needed, arrivals.size()) - 1]);
        }
    }

    JobCore& core_;
    std::vector<double>& device_memory_;
};

// Real mode: the wall clock, as the endpoints measured it, every worker on its own thread
// computing at once as real workers would.
class MeasuredBarrierClock final : public BarrierClock {
public:
    explicit MeasuredBarrierClock(JobCore& core)
        : core_(core)
        , last_comm_s_(core.job().workers.size(), 0.0)
    {
    }

    // The transfer is the active workers' pulls and pushes, each as long as its last measured
    // one (before any, as its network profile says); what crosses which link is fulcrumd's to
    // say (a remote worker's cross its own host's). The wait is the gap before the iteration.
    void hold_for_links(
        const std::vector<std::size_t>& active, std::int64_t iteration, const std::atomic<bool>* stop) override
    {
        if (!core_.config().comm_gate || active.empty())
            return;
        CommTransfer transfer { core_.job().wall_seconds(), static_cast<double>(core_.job().model_bytes), {}, {} };
        for (const std::size_t i : active) {
            transfer.workers.push_back(static_cast<WorkerId>(i));
            transfer.alone_s.push_back(core_.job().transfer_s(i, iteration, last_comm_s_[i]));
        }
        core_.config().comm_gate(transfer, stop);
    }

    std::size_t compute_threads() const override { return std::max<std::size_t>(1, core_.job().workers.size()); }
    double dispatch(double /*now*/) const override { return core_.job().wall_seconds(); }
    double endpoint_slowdown(double slowdown) const override { return slowdown; }

    // The round trip less the worker's own compute time is its communication.
    double close_barrier(std::vector<IterationRecord>& rows, std::vector<BarrierTask>& tasks, double dispatched,
        std::int64_t /*iteration*/, std::size_t needed, const std::atomic<bool>* /*stop*/) override
    {
        const double memory = perf::memory_available_share();
        std::vector<double> ends;
        double given_up = dispatched; // the latest loss or exclusion the barrier waited for
        for (IterationRecord& row : rows) {
            const BarrierTask& task = tasks[static_cast<std::size_t>(row.worker)];
            const BatchMeasurement& m = task.batch;
            row.start_s = dispatched;
            row.compute_s = m.compute_s;
            row.comm_s = (task.pull_end - task.pull_start) + std::max(0.0, m.elapsed_s - m.compute_s);
            last_comm_s_[static_cast<std::size_t>(row.worker)] = row.comm_s;
            row.end_s = task.end;
            row.cpu_share = row.compute_s > 0 ? std::min(1.0, m.cpu_seconds / row.compute_s) : 1.0;
            row.memory_share = m.memory_share.value_or(memory);
            row.gpu = m.gpu;
            if (!m.lost)
                ends.push_back(row.end_s);
            else
                given_up = std::max(given_up, task.end);
        }
        std::sort(ends.begin(), ends.end());
        // Fewer arrivals than it needs: the barrier closed when the last missing worker was
        // known lost or given up (a stalled worker excluded), not at the last arrival before.
        if (ends.size() < needed)
            return std::max(ends.empty() ? dispatched : ends.back(), given_up);
        return ends[needed - 1];
    }

    perf::ResourceShare next_share(const IterationRecord& row, double /*barrier*/) const override
    {
        return { row.cpu_share, row.memory_share };
    }

    void after_barrier(double /*now*/, const std::atomic<bool>* /*stop*/) override { }

private:
    JobCore& core_;
    std::vector<double> last_comm_s_; // per slot: its last measured communication
};

} // namespace

std::unique_ptr<BarrierClock> make_barrier_clock(JobCore& core, std::vector<double>& device_memory)
{
    if (core.config().mode == ClockMode::Real)
        return std::make_unique<MeasuredBarrierClock>(core);
    return std::make_unique<ModelledBarrierClock>(core, device_memory);
}

} // namespace fulcrum::train
