// Gradient throughput of each model on Fashion-MNIST batches, single-threaded (Eigen
// without OpenMP), in samples per second and GFLOP/s, against a baseline measured in the
// same run: a large square GEMM, the best rate Eigen reaches on this core.
//
//   gradient_throughput [--batch N] [--seconds S] [--json]

#include "data/batch_sampler.h"
#include "data/fashion_mnist.h"
#include "data/synthetic.h"
#include "model/model_factory.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

using namespace fulcrum;
using SteadyClock = std::chrono::steady_clock;

namespace {

double gemm_gflops(double seconds)
{
    const Eigen::Index n = 1024;
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
    int reps = 0;
    const auto start = SteadyClock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        c.noalias() = a * b;
        ++reps;
        elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
    }
    return 2.0 * static_cast<double>(n * n * n) * reps / elapsed / 1e9 + 0 * c(0, 0);
}

double samples_per_second(model::Model& model, const data::Dataset& train, std::int32_t batch, double seconds)
{
    model::Vector params(model.parameter_count()), gradient(model.parameter_count());
    model.initialize(params, 1);
    data::BatchSampler sampler(train.size(), 3);
    Eigen::MatrixXf features;
    std::vector<std::int32_t> labels;
    std::int64_t samples = 0;
    // The same work a worker does per iteration: draw and gather the batch, forward, backward.
    const auto start = SteadyClock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        data::gather(train, sampler.next(batch), features, labels);
        model.loss_and_gradient(params, features, labels, gradient);
        params -= 1e-4f * gradient;
        samples += batch;
        elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
    }
    return static_cast<double>(samples) / elapsed;
}

} // namespace

int main(int argc, char** argv)
{
    std::int32_t batch = 128;
    double seconds = 3.0;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = std::stoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = std::stod(argv[++i]);
        else if (!std::strcmp(argv[i], "--json"))
            json = true;
        else {
            std::fprintf(stderr, "usage: gradient_throughput [--batch N] [--seconds S] [--json]\n");
            return 2;
        }
    }
    Eigen::setNbThreads(1);
    const bool real = std::filesystem::exists(data::kFashionMnistDir);
    const auto data = real
        ? data::load_fashion_mnist()
        : data::make_synthetic(
            { .train_size = 60000, .test_size = 10, .dim = 784, .classes = 10, .separation = 3, .seed = 1 });
    const double peak = gemm_gflops(seconds);
    if (!json)
        std::printf("gradient throughput, 1 thread, batch %d, %s data; baseline 1024^3 SGEMM: %.1f GFLOP/s\n", batch,
            real ? "Fashion-MNIST" : "synthetic 784-dim", peak);
    std::string out
        = "{\"batch\": " + std::to_string(batch) + ", \"gemm_gflops\": " + std::to_string(peak) + ", \"models\": {";
    bool first = true;
    for (const char* type : { "softmax", "svm", "mlp" }) {
        auto model = model::make_model({ .type = type, .hidden = { 256, 128 } }, 784, 10);
        const double rate = samples_per_second(*model, *data.train, batch, seconds);
        const double gflops = rate * model->flops_per_sample() / 1e9;
        if (!json)
            std::printf("  %-22s %9.0f samples/s  %6.1f GFLOP/s  %4.0f%% of the SGEMM rate\n", model->name().c_str(),
                rate, gflops, 100 * gflops / peak);
        out += std::string(first ? "" : ", ") + "\"" + type + "\": {\"name\": \"" + model->name()
            + "\", \"samples_per_second\": " + std::to_string(rate) + ", \"gflops\": " + std::to_string(gflops) + "}";
        first = false;
    }
    if (json)
        std::printf("%s}}\n", out.c_str());
    return 0;
}
