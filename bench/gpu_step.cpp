// A GPU worker's training step on cuda:0 against the same cuBLAS products measured alone
// in the same run (issue 20's targets), for the large MLP and the launch-bound one: the step
// as workers run it (CUDA graphs, the caller's buffers pinned), through Staging memory, and
// without graphs.
//   build/release/bench/gpu_step [--seconds S] [--json] [--device cpu|cuda:0] [--model NAME]
// Prints "skipped: no CUDA device ..." and exits 0 where there is no device (CI). With
// --device cpu it times the host reference instead: scripts/gpu-check.sh --dry-run checks
// its own plumbing that way. A failure exits 1 with the error (JSON: {"error": ...}).
#include "common/random.h"
#include "gpu/cuda_devices.h"
#include "gpu/dense_pass.h"
#include "gpu/host_dense_ops.h"
#include "gpu/resident_step.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

using namespace fulcrum;

namespace {

struct Case {
    const char* name;
    std::vector<std::int64_t> layers;
    int batch;
};

struct Figures {
    double step_samples_per_s = 0; // wall clock: pull, gather, forward, backward, push
    bool pinned = false; // the parameters and gradient copied straight from and to the caller's pinned buffers
    double staged_step_samples_per_s = 0; // the same, the caller's buffers copied through Staging memory
    double eager_step_samples_per_s = 0; // pinned, every operation launched on its own (no CUDA graph)
    double device_samples_per_s = 0; // CUDA events over the same steps
    double gemm_samples_per_s = 0; // only the step's matrix products, same shapes, same stream
};

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The ops a step runs on: CUDA device 0, or the host reference (--device cpu).
using MakeOps = std::function<std::unique_ptr<gpu::DenseOps>(bool graphs)>;

Figures measure(const Case& c, double seconds, const MakeOps& make_ops)
{
    const gpu::NetworkShape shape { c.layers, model::LossHead::SoftmaxCrossEntropy };
    const auto dim = static_cast<std::size_t>(shape.input_dim());
    const std::size_t samples = 8192;
    Rng rng(1);
    std::vector<float> features(dim * samples), params(static_cast<std::size_t>(shape.parameter_count()));
    for (float& v : features)
        v = static_cast<float>(standard_normal(rng));
    for (float& v : params)
        v = 0.01f * static_cast<float>(standard_normal(rng));
    std::vector<std::int32_t> labels(samples);
    for (std::size_t i = 0; i < samples; ++i)
        labels[i] = static_cast<std::int32_t>(i % 10);
    std::vector<float> gradient(params.size());
    std::vector<std::int64_t> batch(static_cast<std::size_t>(c.batch));

    Figures f;
    enum class Variant { Pinned, Staged, Eager };
    for (const Variant variant : { Variant::Pinned, Variant::Staged, Variant::Eager }) {
        gpu::ResidentStep step(make_ops(variant != Variant::Eager), shape, features, labels);
        if (variant != Variant::Staged) {
            const bool pinned = step.pin_host_buffers(params, gradient);
            if (variant == Variant::Pinned)
                f.pinned = pinned;
        }
        // The first step, untimed as the products' set-up is: it sets cuBLAS up and captures
        // the graph, once a job (on an H200 about ten steps' time of the large MLP).
        std::iota(batch.begin(), batch.end(), std::int64_t { 0 });
        step.loss_and_gradient(params, batch, gradient);
        std::int64_t steps = 0;
        double device = 0;
        const auto began = std::chrono::steady_clock::now();
        while (seconds_since(began) < seconds || steps < 10) {
            for (std::size_t j = 0; j < batch.size(); ++j)
                batch[j]
                    = static_cast<std::int64_t>((static_cast<std::size_t>(steps) * batch.size() + j * 7) % samples);
            step.loss_and_gradient(params, batch, gradient);
            device += step.last_compute_seconds();
            ++steps;
        }
        const double rate = static_cast<double>(steps * c.batch) / seconds_since(began);
        if (variant == Variant::Pinned) {
            f.step_samples_per_s = rate;
            f.device_samples_per_s = static_cast<double>(steps * c.batch) / device;
        } else {
            (variant == Variant::Staged ? f.staged_step_samples_per_s : f.eager_step_samples_per_s) = rate;
        }
    }
    {
        // The products of one step: per layer W x input, dW = delta x below^T, and (above
        // the first layer) W^T x delta, on buffers of the same shapes.
        auto ops = make_ops(false);
        std::size_t largest = 0;
        for (std::size_t l = 0; l < shape.layers(); ++l)
            largest = std::max(largest, static_cast<std::size_t>(shape.layer_sizes[l] * shape.layer_sizes[l + 1]));
        for (const std::int64_t width : shape.layer_sizes)
            largest = std::max(largest, static_cast<std::size_t>(width) * static_cast<std::size_t>(c.batch));
        gpu::OpsBuffer<float> a(*ops, gpu::Memory::Compute), b(*ops, gpu::Memory::Compute),
            out(*ops, gpu::Memory::Compute);
        a.reserve(largest);
        b.reserve(largest);
        out.reserve(largest);
        std::int64_t steps = 0;
        ops->finish();
        ops->start_timing();
        const auto began = std::chrono::steady_clock::now();
        while (seconds_since(began) < seconds || steps < 10) {
            for (std::size_t l = 0; l < shape.layers(); ++l) {
                const int o = static_cast<int>(shape.layer_sizes[l + 1]), i = static_cast<int>(shape.layer_sizes[l]);
                ops->gemm(false, false, o, c.batch, i, a.data(), o, b.data(), i, 0, out.data(), o);
                ops->gemm(false, true, o, i, c.batch, a.data(), o, b.data(), i, 0, out.data(), o);
                if (l > 0)
                    ops->gemm(true, false, i, c.batch, o, a.data(), o, b.data(), o, 0, out.data(), i);
            }
            ++steps;
            if (steps % 20 == 0)
                ops->finish(); // keeps the queue short, as a step's own wait does
        }
        ops->finish();
        f.gemm_samples_per_s = static_cast<double>(steps * c.batch) / ops->timed_seconds();
    }
    return f;
}

} // namespace

int run(int argc, char** argv)
{
    double seconds = 3;
    bool json = false;
    bool on_cpu = false;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--seconds" && i + 1 < argc)
            seconds = std::stod(argv[++i]);
        else if (arg == "--json")
            json = true;
        else if (arg == "--device" && i + 1 < argc
            && (std::strcmp(argv[i + 1], "cpu") == 0 || std::strcmp(argv[i + 1], "cuda:0") == 0))
            on_cpu = std::strcmp(argv[++i], "cpu") == 0;
        else if (arg == "--model" && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr,
                "usage: gpu_step [--seconds S] [--json] [--device cpu|cuda:0] [--model NAME]\n"
                "Times a GPU worker's step on cuda:0 against the same cuBLAS products alone (FP32).\n"
                "--device cpu times the host reference instead; --model takes one of\n"
                "mlp-784-4096-4096-10 (batch 4096) and mlp-784-256-128-10 (batch 128).\n");
            return arg == "--help" || arg == "-h" ? 0 : 2;
        }
    }
    const gpu::CudaDevices& devices = gpu::cuda_devices();
    if (!on_cpu && devices.count == 0) {
        std::printf(json ? "{\"skipped\": \"no CUDA device: %s\"}\n" : "skipped: no CUDA device: %s\n",
            devices.why_none.c_str());
        return 0;
    }
    const MakeOps make_ops = [on_cpu](bool graphs) -> std::unique_ptr<gpu::DenseOps> {
        if (on_cpu)
            return std::make_unique<gpu::HostDenseOps>(std::nullopt, graphs);
        return gpu::make_cuda_dense_ops(0, std::nullopt, graphs);
    };
    std::vector<Case> cases { { "mlp-784-4096-4096-10", { 784, 4096, 4096, 10 }, 4096 },
        { "mlp-784-256-128-10", { 784, 256, 128, 10 }, 128 } };
    if (!only.empty()) {
        std::erase_if(cases, [&](const Case& c) { return c.name != only; });
        if (cases.empty()) {
            std::fprintf(
                stderr, "gpu_step: --model %s: expected mlp-784-4096-4096-10 or mlp-784-256-128-10\n", only.c_str());
            return 2;
        }
    }
    const std::string device = on_cpu ? std::string("the host reference (CPU)") : devices.names[0];
    if (json)
        std::printf("{\"device\": \"%s\", \"math\": \"FP32\", \"models\": {", device.c_str());
    else
        std::printf("%s: %s, FP32 products\n", on_cpu ? "cpu" : "cuda:0", device.c_str());
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const Figures f = measure(cases[k], seconds, make_ops);
        if (json)
            std::printf("%s\"%s\": {\"batch\": %d, \"step_samples_per_s\": %.1f, \"pinned\": %s, "
                        "\"device_samples_per_s\": %.1f, \"staged_step_samples_per_s\": %.1f, "
                        "\"eager_step_samples_per_s\": %.1f, \"gemm_samples_per_s\": %.1f}",
                k ? ", " : "", cases[k].name, cases[k].batch, f.step_samples_per_s, f.pinned ? "true" : "false",
                f.device_samples_per_s, f.staged_step_samples_per_s, f.eager_step_samples_per_s, f.gemm_samples_per_s);
        else
            std::printf("%-22s batch %4d: step %10.0f samples/s (%s; device time %10.0f; through staging %10.0f; "
                        "without CUDA graphs %10.0f), products alone %10.0f; step / products %.2f\n",
                cases[k].name, cases[k].batch, f.step_samples_per_s, f.pinned ? "pinned" : "not pinned",
                f.device_samples_per_s, f.staged_step_samples_per_s, f.eager_step_samples_per_s, f.gemm_samples_per_s,
                f.step_samples_per_s / f.gemm_samples_per_s);
    }
    if (json)
        std::printf("}}\n");
    return 0;
}

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const std::exception& e) { // the check's summary reports it, never a silent pass
        std::string text = e.what(); // kept valid JSON: quotes, backslashes and controls replaced
        std::replace_if(
            text.begin(), text.end(), [](char c) { return c == '"' || c == '\\' || (c >= 0 && c < 0x20); }, '\'');
        std::printf("\n{\"error\": \"%s\"}\n", text.c_str()); // on a line of its own
        std::fprintf(stderr, "gpu_step: %s\n", e.what());
        return 1;
    }
}
