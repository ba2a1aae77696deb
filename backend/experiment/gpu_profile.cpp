// A device's performance model measured: a worker's real step on the device (the CPU path,
// or a GPU through ResidentStep) timed at batch sizes 1 to 4096, fitted to the GPU model
// LB-BSP Sec. 5 describes, and written as a "gpu" section a scenario can use, so that the
// virtual and paced modes simulate this device rather than one of the paper's classes.
#include "common/error.h"
#include "data/synthetic.h"
#include "experiment/experiment.h"
#include "experiment/results_table.h"
#include "gpu/cuda_devices.h"
#include "model/model_factory.h"
#include "perf/gpu_profile_fit.h"
#include "train/worker.h"

#include <algorithm>
#include <chrono>
#include <fstream>

namespace fulcrum::experiment {

namespace {

// The median of `repeats` steps at `batch` (after two to warm up): the device's own time
// (CUDA events) on a GPU, the wall time on the CPU.
double median_step_seconds(train::Worker& worker, std::int32_t batch, int repeats)
{
    std::vector<double> times;
    for (int k = 0; k < repeats + 2; ++k) {
        const auto started = std::chrono::steady_clock::now();
        worker.compute_gradient(batch);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (k >= 2)
            times.push_back(worker.device_seconds().value_or(wall));
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    return times[times.size() / 2];
}

} // namespace

void run_gpu_profile(const ExperimentOptions& options)
{
    const auto device = perf::parse_compute_device(options.device);
    if (!device)
        throw InputError("fulcrum-experiment", "--device", "is '" + options.device + "', expected cpu or cuda:N");
    if (device->is_cuda())
        if (const std::string why = gpu::absent_device_reason(device->index); !why.empty())
            throw InputError("fulcrum-experiment", "--device", options.device + " is not on this machine: " + why);

    // The scenarios' model on data of Fashion-MNIST's shape.
    const std::int32_t largest = options.quick ? 256 : 4096;
    data::SyntheticSpec spec;
    spec.train_size = options.quick ? 2048 : 20000;
    spec.test_size = 10;
    spec.dim = 784;
    spec.classes = 10;
    spec.seed = options.seed;
    const data::TrainTest set = data::make_synthetic(spec);
    const auto model = model::make_mlp(784, { 256, 128 }, 10);
    perf::WorkerProfile setup;
    setup.name = "profiled";
    setup.device = *device;
    train::Worker worker(0, setup, *model, set.train, options.seed);
    model->initialize(worker.replica(), options.seed);

    std::vector<perf::TimingPoint> points;
    std::vector<double> own_gb;
    for (std::int32_t batch = 1; batch <= largest; batch *= 2) {
        if (options.status)
            options.status("batch " + std::to_string(batch) + " of up to " + std::to_string(largest));
        points.push_back({ batch, median_step_seconds(worker, batch, options.quick ? 3 : 7) });
        if (const auto use = worker.device_use())
            own_gb.push_back(use->memory_gb.value_or(0));
    }
    const perf::TimingFit fit = perf::fit_gpu_timing(points);

    ResultsTable table({ "batch", "measured_ms", "fitted_ms", "samples_per_s" });
    for (const perf::TimingPoint& p : points)
        table.add({ std::to_string(p.batch_size), fmt(p.seconds * 1e3, 4), fmt(fit.seconds(p.batch_size) * 1e3, 4),
            fmt(p.batch_size / p.seconds, 0) });
    table.write_csv(options.out / "results.csv");

    // Memory grows linearly with the batch (every batch buffer is sized for it), so two
    // readings give the model's base and per-sample memory; a CPU has no device to read.
    std::string memory_fields, memory_text;
    if (own_gb.size() == points.size() && own_gb.size() >= 2) {
        const double per_sample
            = (own_gb.back() - own_gb.front()) / (points.back().batch_size - points.front().batch_size);
        const double base = own_gb.front() - per_sample * points.front().batch_size;
        const double total_gb = gpu::cuda_devices().memory_gb.at(static_cast<std::size_t>(device->index));
        memory_fields = ",\n    \"memory_gb\": " + fmt(total_gb, 3) + ",\n    \"base_memory_gb\": "
            + fmt(std::max(0.0, base), 6) + ",\n    \"memory_per_sample_gb\": " + fmt(per_sample, 9);
        memory_text = "Memory: the device's " + fmt(total_gb, 1) + " GB; " + fmt(std::max(0.0, base), 4)
            + " GB resident (the training set and parameters) and " + fmt(per_sample * 1e6, 2)
            + " kB per sample of batch, read after each step.\n\n";
    } else {
        memory_text = "Memory is not measured on the CPU: the profile keeps the v100 class's memory fields.\n\n";
    }
    const std::string profile = "{\n  // fulcrum-experiment gpu-profile --device " + options.device
        + ": MLP 784-256-128-10, batches 1 to " + std::to_string(largest) + "\n  \"gpu\": {\n    \"class\": \"v100\",\n"
        + "    \"peak_speed\": " + fmt(fit.peak_speed, 1) + ",\n    \"launch_overhead_s\": "
        + fmt(fit.launch_overhead_s, 7) + ",\n    \"saturation_batch\": " + std::to_string(fit.saturation_batch)
        + ",\n    \"noise_sigma\": " + fmt(std::min(2.0, fit.rms_relative_error), 4) + memory_fields + "\n  }\n}\n";
    std::ofstream(options.out / "profile.json") << profile;

    const std::string body = "A worker's step (MLP 784-256-128-10, data of Fashion-MNIST's shape) on **"
        + options.device + "**, the median of " + std::to_string(options.quick ? 3 : 7) + " steps per batch size ("
        + (device->is_cuda() ? "CUDA-event time" : "wall time")
        + "), fitted to LB-BSP Sec. 5's GPU model t(x) = Γ(0) + max(x, x_s) / peak: Γ(0) = "
        + fmt(fit.launch_overhead_s * 1e3, 3) + " ms, x_s = " + std::to_string(fit.saturation_batch) + ", peak = "
        + fmt(fit.peak_speed, 0) + " samples/s, RMS relative error " + fmt(fit.rms_relative_error, 3) + ".\n\n"
        + (fit.rms_relative_error > 0.1
                ? "**The model fits this device poorly** (RMS relative error above 10 %): its time is not an "
                  "overhead plus a linear part (a CPU's caches, say), and `noise_sigma` carries the misfit.\n\n"
                : std::string())
        + memory_text + "`profile.json` is a worker's `gpu` section for a scenario.\n\n" + table.markdown();
    write_markdown(options.out / "results.md", "A device's performance model, measured",
        "fulcrum-experiment gpu-profile --device " + options.device + " --out " + options.out.string()
            + (options.quick ? " --quick" : ""),
        body);
}

} // namespace fulcrum::experiment
