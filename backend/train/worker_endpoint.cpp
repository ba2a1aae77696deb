#include "train/worker_endpoint.h"

#include "perf/proc_stats.h"

#include <chrono>
#include <span>
#include <thread>

namespace fulcrum::train {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class LocalEndpoint final : public WorkerEndpoint {
public:
    LocalEndpoint(Worker& worker, bool reads_device, BatchRelease* release)
        : worker_(worker)
        , reads_device_(reads_device)
        , release_(release)
    {
    }

    BatchMeasurement compute(std::int64_t /*iteration*/, std::int32_t batch_size, double slowdown) override
    {
        BatchMeasurement m;
        const WorkerId id = worker_.id();
        const BatchRelease::Batch batch = release_ ? release_->start(id) : 0;
        if (release_ && release_->given_up(id, batch))
            return given_up();
        const auto began = std::chrono::steady_clock::now();
        const double cpu_before = perf::thread_cpu_seconds();
        m.loss = worker_.compute_gradient(batch_size);
        m.cpu_seconds = perf::thread_cpu_seconds() - cpu_before;
        if (slowdown > 1) { // an injected straggler idles for the extra time
            const std::chrono::duration<double> extra((slowdown - 1) * seconds_since(began));
            if (!release_)
                std::this_thread::sleep_for(extra);
            else if (!release_->idle(id, batch, extra))
                return given_up();
        }
        if (release_ && release_->given_up(id, batch))
            return given_up();
        // A GPU worker's time is its stream's, measured with CUDA events, plus any injected delay.
        const auto on_device = worker_.device_seconds();
        m.compute_s = on_device && slowdown <= 1 ? *on_device : seconds_since(began);
        m.elapsed_s = m.compute_s;
        if (reads_device_)
            m.gpu = worker_.device_use().value_or(GpuUse {});
        return m;
    }

    bool in_another_process() const override { return false; }

private:
    static BatchMeasurement given_up()
    {
        BatchMeasurement m;
        m.lost = RemoteLoss { RemoteLoss::Kind::Excluded };
        return m;
    }

    Worker& worker_;
    bool reads_device_;
    BatchRelease* release_;
};

class RemoteProcessEndpoint final : public WorkerEndpoint {
public:
    RemoteProcessEndpoint(Worker& worker, RemoteWorkers& remote)
        : worker_(worker)
        , remote_(remote)
    {
    }

    // The remote process applies no injected slowdown: it is a machine of its own.
    BatchMeasurement compute(std::int64_t iteration, std::int32_t batch_size, double /*slowdown*/) override
    {
        BatchMeasurement m;
        const auto began = std::chrono::steady_clock::now();
        model::Vector& replica = worker_.replica();
        model::Vector& gradient = worker_.gradient_buffer();
        const auto result = remote_.compute(worker_.id(), iteration,
            std::span<const float>(replica.data(), static_cast<std::size_t>(replica.size())), batch_size,
            std::span<float>(gradient.data(), static_cast<std::size_t>(gradient.size())));
        m.elapsed_s = seconds_since(began);
        if (!result.batch) {
            m.lost = result.loss;
            return m;
        }
        const RemoteBatch& batch = *result.batch;
        m.loss = batch.loss;
        m.compute_s = std::min(batch.compute_s, m.elapsed_s);
        m.cpu_seconds = batch.cpu_share * batch.compute_s;
        m.memory_share = batch.memory_share;
        m.gpu = batch.gpu;
        return m;
    }

    bool in_another_process() const override { return true; }

private:
    Worker& worker_;
    RemoteWorkers& remote_;
};

} // namespace

std::unique_ptr<WorkerEndpoint> make_local_endpoint(Worker& worker, bool reads_device, BatchRelease* release)
{
    return std::make_unique<LocalEndpoint>(worker, reads_device, release);
}

std::unique_ptr<WorkerEndpoint> make_remote_endpoint(Worker& worker, RemoteWorkers& remote)
{
    return std::make_unique<RemoteProcessEndpoint>(worker, remote);
}

} // namespace fulcrum::train
