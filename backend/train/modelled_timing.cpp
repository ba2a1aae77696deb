#include "train/modelled_timing.h"

#include <stdexcept>

namespace fulcrum::train {

std::optional<CommGrant> ask_for_links(const JobCore& core, const CommTransfer& transfer, const std::atomic<bool>* stop)
{
    if (!core.config().comm_gate || transfer.workers.empty())
        return std::nullopt;
    std::optional<CommGrant> grant = core.config().comm_gate(transfer, stop);
    if (grant && grant->stretch.size() != transfer.workers.size())
        throw std::logic_error("the communication scheduler answered for another number of workers");
    return grant;
}

double time_modelled_batch(const JobCore& core, IterationRecord& row, std::size_t i, double t, double alone_s,
    const std::optional<CommGrant>& grant, std::size_t r)
{
    Worker& worker = *core.job().workers[i];
    const perf::ComputeTiming timing = worker.performance().compute(t, row.batch_size);
    row.compute_s = timing.duration_s * core.slowdown(i) * core.sharing(i);
    row.comm_s = grant ? grant->wait_s + alone_s * grant->stretch.at(r) : alone_s * core.contention(i);
    row.cpu_share = timing.mean_share.cpu;
    row.memory_share = timing.mean_share.memory;
    row.gpu = worker.modelled_device_use(timing.device_memory);
    row.end_s = t + row.comm_s + row.compute_s;
    return timing.device_memory;
}

bool paced_in_wall_time(JobCore& core)
{
    return core.config().mode == ClockMode::Paced && core.pacer().speed() > 0;
}

void pace_to(JobCore& core, double t, const std::atomic<bool>* stop)
{
    if (core.config().mode == ClockMode::Paced)
        core.pacer().wait_until(t, stop);
    else if (core.config().shared_clock)
        core.config().shared_clock(t, stop);
}

} // namespace fulcrum::train
