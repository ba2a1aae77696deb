// The CUDA path against its host reference. On a machine without a CUDA device (and in a
// build without the CUDA path) the device tests skip, saying why; the refusals run anywhere.
#include "gpu/cuda_devices.h"
#include "gpu/device_check.h"
#include "gpu/device_error.h"
#include "gpu/host_dense_ops.h"
#include "gpu/nvml_library.h"
#include "gpu/resident_step.h"
#include "gpu_test_support.h"
#include "scenario/scenario.h"
#include "train/worker.h"

#include <dlfcn.h>
#include <filesystem>
#include <random>

using namespace fulcrum;
using namespace fulcrum::gpu::testing;

namespace {

#define SKIP_WITHOUT_CUDA_DEVICE()                                                                                     \
    do {                                                                                                               \
        if (gpu::cuda_devices().count == 0)                                                                            \
            GTEST_SKIP() << "no CUDA device: " << gpu::cuda_devices().why_none;                                        \
    } while (false)

TEST(CudaDevices, AnAbsentDeviceIsRefusedByName)
{
    const int absent = gpu::cuda_devices().count;
    try {
        gpu::make_cuda_dense_ops(absent);
        FAIL() << "cuda:" << absent << " was opened";
    } catch (const gpu::DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("cuda:" + std::to_string(absent)), std::string::npos) << e.what();
    }
    if (gpu::cuda_devices().count == 0) {
        EXPECT_FALSE(gpu::cuda_devices().why_none.empty());
    }
}

// A worker on a device the machine lacks fails when built, with the device named: in a job
// that is the job's failure event, never a crash of the process.
TEST(CudaDevices, AWorkerOnAnAbsentDeviceFailsNamingIt)
{
    auto prototype = model::make_softmax_regression(4, 3);
    auto set = std::make_shared<const data::Dataset>(random_dataset(4, 10, 3, 1));
    train::WorkerSetup setup;
    setup.name = "gpu-w";
    setup.device = { perf::ComputeDevice::Kind::Cuda, gpu::cuda_devices().count, std::nullopt };
    EXPECT_THROW(train::Worker(0, setup, *prototype, set, 7), gpu::DeviceError);
}

class CudaStepTest : public ::testing::TestWithParam<ModelCase> { };

INSTANTIATE_TEST_SUITE_P(Models, CudaStepTest, ::testing::ValuesIn(model_cases()),
    [](const ::testing::TestParamInfo<ModelCase>& param) { return std::string(param.param.name); });

// Same math as the CPU path: loss and gradient within 1e-4 relative (FP32 cuBLAS, the
// kernels' sums in another order than Eigen's).
TEST_P(CudaStepTest, MatchesTheHostReference)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    auto m = GetParam().make();
    const data::Dataset set = random_dataset(m->input_dim(), 500, m->classes(), 3);
    model::Vector params(m->parameter_count());
    m->initialize(params, 5);
    std::vector<std::int64_t> samples;
    for (std::int64_t i = 0; i < 300; ++i)
        samples.push_back((i * 37) % 500);
    auto host = step_on(std::make_unique<gpu::HostDenseOps>(), *m, set);
    auto cuda = step_on(gpu::make_cuda_dense_ops(0), *m, set);
    model::Vector want(params.size()), got(params.size());
    const double want_loss = host.loss_and_gradient(view(params), samples, view(want));
    const double got_loss = cuda.loss_and_gradient(view(params), samples, view(got));
    EXPECT_NEAR(got_loss, want_loss, 1e-4 * std::max(1.0, std::abs(want_loss)));
    expect_close(got.data(), want.data(), static_cast<std::size_t>(got.size()), 1e-4, "gradient");
    EXPECT_GT(cuda.last_compute_seconds(), 0.0);

    const auto want_eval = host.evaluate(view(params), 128);
    const auto got_eval = cuda.evaluate(view(params), 128);
    EXPECT_NEAR(got_eval.loss, want_eval.loss, 1e-4 * std::max(1.0, want_eval.loss));
    EXPECT_NEAR(got_eval.accuracy, want_eval.accuracy, 1.0 / 500);
}

// The launch-bound benchmark model at its batch: Fashion-MNIST's shape.
TEST(CudaStep, TheBenchmarkMlpMatchesTheHostReference)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    auto m = model::make_mlp(784, { 256, 128 }, 10);
    const data::Dataset set = random_dataset(784, 1024, 10, 6);
    model::Vector params(m->parameter_count());
    m->initialize(params, 1);
    std::vector<std::int64_t> samples(128);
    for (std::size_t i = 0; i < samples.size(); ++i)
        samples[i] = static_cast<std::int64_t>((i * 7919) % 1024);
    auto host = step_on(std::make_unique<gpu::HostDenseOps>(), *m, set);
    auto cuda = step_on(gpu::make_cuda_dense_ops(0), *m, set);
    model::Vector want(params.size()), got(params.size());
    EXPECT_NEAR(cuda.loss_and_gradient(view(params), samples, view(got)),
        host.loss_and_gradient(view(params), samples, view(want)), 1e-4 * 3);
    expect_close(got.data(), want.data(), static_cast<std::size_t>(got.size()), 1e-4, "gradient");
}

// A worker whose profile says "cuda:0" draws the same batches as a CPU worker of the same
// seed and computes the same gradient; its time is its stream's, from CUDA events.
TEST(CudaWorker, ComputesTheCpuWorkersGradientOnTheDevice)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    auto prototype = model::make_mlp(20, { 32 }, 4);
    auto set = std::make_shared<const data::Dataset>(random_dataset(20, 400, 4, 12));
    train::WorkerSetup on_cpu, on_gpu;
    on_gpu.device = { perf::ComputeDevice::Kind::Cuda, 0, std::nullopt };
    train::Worker cpu(0, on_cpu, *prototype, set, 99), gpu_worker(0, on_gpu, *prototype, set, 99);
    prototype->initialize(cpu.replica(), 4);
    gpu_worker.replica() = cpu.replica();
    for (int step = 0; step < 3; ++step) {
        const double want = cpu.compute_gradient(64);
        const double got = gpu_worker.compute_gradient(64);
        EXPECT_NEAR(got, want, 1e-4 * std::max(1.0, want)) << "step " << step;
        expect_close(gpu_worker.gradient().data(), cpu.gradient().data(),
            static_cast<std::size_t>(cpu.gradient().size()), 1e-4, "gradient");
    }
    ASSERT_TRUE(gpu_worker.device_seconds());
    EXPECT_GT(*gpu_worker.device_seconds(), 0.0);
    EXPECT_FALSE(cpu.device_seconds());

    // Its device is read after each batch: its own buffers, the device's memory and, where
    // the driver has NVML, utilisation.
    const auto use = gpu_worker.device_use();
    ASSERT_TRUE(use);
    EXPECT_GT(use->memory_gb.value_or(0), 0.0);
    EXPECT_GT(use->memory_share.value_or(0), 0.0);
    EXPECT_LE(use->memory_share.value_or(2), 1.0);
    EXPECT_EQ(use->utilization.has_value(), gpu::NvmlLibrary::get() != nullptr);
    EXPECT_FALSE(cpu.device_use());
}

// x_o on a real device: a small network's batch of 65,536 fits an H100, and the probe gives
// its buffers back; an allocation beyond the device's memory is OutOfDeviceMemory, after
// which the device still computes.
TEST(CudaStep, ProbesItsDeviceAndSurvivesAnAllocationBeyondIt)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    auto reference = model::make_mlp(20, { 32 }, 4);
    const data::Dataset set = random_dataset(20, 300, 4, 8);
    auto step = step_on(gpu::make_cuda_dense_ops(0), *reference, set);
    const std::size_t holding = step.reading().own_bytes;
    EXPECT_EQ(step.probe_batch_limit(65536), 65536);
    EXPECT_EQ(step.reading().own_bytes, holding);

    auto ops = gpu::make_cuda_dense_ops(0);
    const std::size_t total = ops->reading().total_bytes.value_or(0);
    ASSERT_GT(total, 0u);
    EXPECT_THROW(ops->allocate(gpu::Memory::Compute, 2 * total), gpu::OutOfDeviceMemory);
    model::Vector params = model::Vector::Constant(reference->parameter_count(), 0.01f), gradient = params;
    const std::vector<std::int64_t> samples { 0, 1, 2, 3 };
    EXPECT_NO_THROW(step.loss_and_gradient(view(params), samples, view(gradient)));
}

} // namespace

// Four workers' SM shares on one GPU (green contexts): each gets its own SMs, rounded up to
// the device's partition size, or shares the whole GPU and says why; a share beyond what is
// left falls back with the SMs left named; every one still computes the reference gradient.
TEST(CudaStep, SmSharesAreDisjointGreenContextsOrSayWhyNot)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    auto reference = model::make_mlp(20, { 32 }, 4);
    const data::Dataset set = random_dataset(20, 300, 4, 8);
    model::Vector params = model::Vector::Constant(reference->parameter_count(), 0.01f), want = params, got = params;
    const std::vector<std::int64_t> samples { 0, 5, 9, 200 };
    auto host = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    host.loss_and_gradient(view(params), samples, view(want));
    std::vector<std::unique_ptr<gpu::ResidentStep>> steps; // all held at once: the shares are disjoint
    int granted = 0;
    for (const int sms : { 64, 32, 16, 16 }) {
        steps.push_back(std::make_unique<gpu::ResidentStep>(gpu::make_cuda_dense_ops(0, sms), shape_of(*reference),
            std::span<const float>(set.features.data(), static_cast<std::size_t>(set.features.size())), set.labels));
        const std::string placement = steps.back()->placement();
        SCOPED_TRACE(placement);
        if (placement.find("green context") != std::string::npos)
            granted += sms;
        else
            EXPECT_NE(placement.find("the whole GPU shared (asked for"), std::string::npos);
        steps.back()->loss_and_gradient(view(params), samples, view(got));
        expect_close(got.data(), want.data(), static_cast<std::size_t>(got.size()), 1e-4, "gradient");
    }
    EXPECT_LE(granted, gpu::cuda_devices().sm_counts.at(0));
    if (granted == 128) { // every share granted: nothing is left for another 64
        auto late = step_on(gpu::make_cuda_dense_ops(0, 64), *reference, set);
        EXPECT_NE(late.placement().find("SMs left"), std::string::npos) << late.placement();
    }
}

// A strict share that cannot be given fails the worker, naming the share and why; without
// strictness the same share falls back to the whole GPU and says so.
TEST(CudaStep, AStrictShareThatCannotBeGivenFailsNamingWhy)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    std::string why;
    const auto cut = gpu::sm_partitioning(0, why);
    if (!cut)
        GTEST_SKIP() << "no SM partitions on cuda:0: " << why;
    const int all = cut->partitions * cut->size;
    auto everything = gpu::make_cuda_dense_ops(0, all, true, true); // every partition, held
    EXPECT_NE(everything->placement().find(std::to_string(all) + " SMs in a green context"), std::string::npos)
        << everything->placement();
    try {
        gpu::make_cuda_dense_ops(0, cut->size, true, true);
        FAIL() << "a strict share was given with every partition held";
    } catch (const gpu::DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("a strict share of " + std::to_string(cut->size) + " SMs (sms_strict)"),
            std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("SMs left"), std::string::npos) << e.what();
    }
    auto shared = gpu::make_cuda_dense_ops(0, cut->size, true, false);
    EXPECT_NE(shared->placement().find("the whole GPU shared"), std::string::npos) << shared->placement();
}

// Shares are rounded up to whole partitions, and the partitions need not cover every SM: a
// job whose rounded shares exceed them is refused at submission, naming the worker.
TEST(CudaDevices, SharesBeyondTheDevicesPartitionsAreRefusedByName)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    std::string why;
    const auto cut = gpu::sm_partitioning(0, why);
    if (!cut)
        GTEST_SKIP() << "no SM partitions on cuda:0: " << why;
    std::vector<perf::WorkerProfile> workers(static_cast<std::size_t>(cut->partitions) + 1);
    for (std::size_t i = 0; i < workers.size(); ++i) {
        workers[i].name = "w" + std::to_string(i);
        workers[i].device = { perf::ComputeDevice::Kind::Cuda, 0, 1 }; // one SM: a whole partition
    }
    try {
        gpu::check_worker_devices(workers, "job.json");
        FAIL() << workers.size() << " shares were accepted on " << cut->partitions << " partitions";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "workers[" + workers.back().name + "].sms");
        EXPECT_NE(e.reason().find("partitions of " + std::to_string(cut->size) + " SMs"), std::string::npos)
            << e.what();
    }
    workers.pop_back();
    EXPECT_NO_THROW(gpu::check_worker_devices(workers, "job.json"));
}

// A job whose workers ask one GPU for more SMs than it has is refused at submission, naming
// the worker whose share goes over.
TEST(CudaDevices, SmSharesBeyondTheDeviceAreRefusedByName)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    const int has = gpu::cuda_devices().sm_counts.at(0);
    std::vector<perf::WorkerProfile> workers(2);
    workers[0].name = "big";
    workers[1].name = "over";
    for (auto& w : workers)
        w.device = { perf::ComputeDevice::Kind::Cuda, 0, has / 2 + 1 };
    try {
        gpu::check_worker_devices(workers, "job.json");
        FAIL() << "two workers of " << has / 2 + 1 << " SMs were accepted on a GPU of " << has;
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "workers[over].sms");
    }
    // Small shares fit both counts: the SMs and the partitions they round up to.
    workers[0].device.sms = 8;
    workers[1].device.sms = 8;
    EXPECT_NO_THROW(gpu::check_worker_devices(workers, "job.json"));
}

// Steps replayed from CUDA graphs match the host reference batch after batch, through
// batch sizes that move buffers (graphs dropped and captured again) and an evaluation.
TEST(CudaStep, GraphReplaysMatchTheHostReference)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    auto reference = model::make_mlp(20, { 32 }, 4);
    const data::Dataset set = random_dataset(20, 300, 4, 6);
    auto cuda = step_on(gpu::make_cuda_dense_ops(0), *reference, set);
    auto host = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    model::Vector params(reference->parameter_count()), want = params, got = params;
    Rng rng(5);
    for (const int batch : { 8, 8, 8, 8, 64, 8, 64, 64, 128, 8, 8 }) {
        SCOPED_TRACE(batch);
        reference->initialize(params, rng());
        expect_step_matches(cuda, host, params, random_samples(rng, batch, 300), got, want);
        if (batch == 128) {
            EXPECT_NEAR(cuda.evaluate(view(params), 100).accuracy, host.evaluate(view(params), 100).accuracy, 1e-6);
        }
    }
}

// A step copying straight from and to the caller's pinned buffers (page-locked by the
// driver) matches the host reference, and so do its steps into a buffer not pinned.
TEST(CudaStep, PinnedHostBuffersMatchTheHostReference)
{
    SKIP_WITHOUT_CUDA_DEVICE();
    auto reference = model::make_mlp(20, { 32 }, 4);
    const data::Dataset set = random_dataset(20, 300, 4, 7);
    auto cuda = step_on(gpu::make_cuda_dense_ops(0), *reference, set);
    auto host = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    model::Vector params(reference->parameter_count()), want = params, got = params, other = params;
    ASSERT_TRUE(cuda.pin_host_buffers(view(params), view(got)));
    Rng rng(8);
    for (const int batch : { 8, 8, 64, 64, 8 }) {
        SCOPED_TRACE(batch);
        reference->initialize(params, rng());
        const std::vector<std::int64_t> samples = random_samples(rng, batch, 300);
        expect_step_matches(cuda, host, params, samples, got, want);
        cuda.loss_and_gradient(view(params), samples, view(other));
        expect_close(other.data(), want.data(), static_cast<std::size_t>(other.size()), 1e-4, "unpinned gradient");
    }
}

// NVML is loaded where the driver installed it; elsewhere the reason is kept for the GPU
// check's summary, and utilisation is recorded as NULL.
TEST(Nvml, IsUsedWhereTheDriverHasItAndSaysWhyNot)
{
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library)
        dlclose(library);
    if (gpu::NvmlLibrary::get()) {
        EXPECT_TRUE(gpu::NvmlLibrary::why_absent().empty());
        EXPECT_NE(library, nullptr);
        return;
    }
    EXPECT_FALSE(gpu::NvmlLibrary::why_absent().empty());
    if (!library) {
        EXPECT_NE(gpu::NvmlLibrary::why_absent().find("libnvidia-ml.so.1 is not installed"), std::string::npos)
            << gpu::NvmlLibrary::why_absent();
    }
}

// The shipped real-mode GPU scenario (scripts/gpu-check.sh runs it) parses, and is refused
// by name on a machine without cuda:0, as fulcrumd and fulcrum-run refuse it.
TEST(CudaDevices, TheShippedGpuScenarioIsCheckedAgainstThisMachine)
{
    // From the working folder first: scripts/gpu-check.sh runs the test from a checkout on a
    // machine where the build's source folder does not exist.
    std::string path = "resources/scenarios/gpu-real.json";
    if (!std::filesystem::exists(path))
        path = std::string(FULCRUM_SOURCE_DIR) + "/" + path;
    const scenario::Scenario s = scenario::load_scenario(path);
    ASSERT_EQ(s.workers.size(), 4u);
    EXPECT_EQ(perf::to_string(s.workers[3].device), "cuda:0");
    if (gpu::cuda_devices().count > 0) {
        EXPECT_NO_THROW(gpu::check_worker_devices(s.workers, path));
        return;
    }
    try {
        gpu::check_worker_devices(s.workers, path);
        FAIL() << "gpu-real.json was accepted without a CUDA device";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "workers[gpu-0].device");
        EXPECT_NE(e.reason().find(gpu::cuda_devices().why_none), std::string::npos) << e.what();
    }
}
