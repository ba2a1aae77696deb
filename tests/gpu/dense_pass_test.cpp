// The GPU workers' training step, run on HostDenseOps: the same sequence of operations and
// the same per-sample head code the CUDA kernels run, checked against the Eigen path of
// DenseNetwork and against finite differences, on any machine.
#include "data/batch_sampler.h"
#include "gpu/device_error.h"
#include "gpu/head_math.h"
#include "gpu/host_dense_ops.h"
#include "gpu/resident_step.h"
#include "gpu_test_support.h"
#include "model/evaluate.h"
#include "model/loss_head.h"

#include <numeric>
#include <random>
#include <thread>

using namespace fulcrum;
using namespace fulcrum::gpu::testing;

namespace {

class DensePassTest : public ::testing::TestWithParam<ModelCase> { };

INSTANTIATE_TEST_SUITE_P(Models, DensePassTest, ::testing::ValuesIn(model_cases()),
    [](const ::testing::TestParamInfo<ModelCase>& param) { return std::string(param.param.name); });

// The batch is gathered from the resident set by index, so the step must equal the Eigen
// path on the same samples gathered on the host, loss and every gradient coordinate.
TEST_P(DensePassTest, ResidentStepMatchesTheEigenPathOnTheSameSamples)
{
    auto reference = GetParam().make();
    const data::Dataset set = random_dataset(reference->input_dim(), 200, reference->classes(), 5);
    model::Vector params(reference->parameter_count());
    reference->initialize(params, 9);
    const std::vector<std::int64_t> samples { 3, 199, 42, 42, 0, 17, 108, 64, 5, 150, 77 };

    Eigen::MatrixXf features;
    std::vector<std::int32_t> labels;
    data::gather(set, samples, features, labels);
    model::Vector want(reference->parameter_count());
    const double want_loss = reference->loss_and_gradient(params, features, labels, want);

    auto step = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    model::Vector got(reference->parameter_count());
    const double got_loss = step.loss_and_gradient(view(params), samples, view(got));

    EXPECT_NEAR(got_loss, want_loss, 1e-5 * std::max(1.0, std::abs(want_loss)));
    expect_close(got.data(), want.data(), static_cast<std::size_t>(got.size()), 1e-5, "gradient");
    EXPECT_GE(step.last_compute_seconds(), 0.0);
}

// Central differences of the step's loss, coordinate by coordinate, in the way
// model/gradient_check_test.cpp checks the Eigen path; ReLU and hinge kinks make a rare
// coordinate miss, so 98 % must agree.
TEST_P(DensePassTest, GradientMatchesFiniteDifferences)
{
    auto reference = GetParam().make();
    const data::Dataset set = random_dataset(reference->input_dim(), 40, reference->classes(), 13);
    model::Vector params(reference->parameter_count());
    reference->initialize(params, 21);
    Rng rng(11);
    for (Eigen::Index i = 0; i < params.size(); ++i)
        params(i) += 0.1f * static_cast<float>(standard_normal(rng)); // biases off zero too
    std::vector<std::int64_t> samples(8);
    std::iota(samples.begin(), samples.end(), 4);
    auto step = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    model::Vector gradient(params.size()), scratch(params.size());
    const std::span<float> scratch_view = view(scratch);
    step.loss_and_gradient(view(params), samples, view(gradient));

    const float h = 1e-3f;
    int agree = 0;
    for (Eigen::Index i = 0; i < params.size(); ++i) {
        model::Vector plus = params, minus = params;
        plus(i) += h;
        minus(i) -= h;
        const double numeric = (step.loss_and_gradient(view(plus), samples, scratch_view)
                                   - step.loss_and_gradient(view(minus), samples, scratch_view))
            / (2.0 * h);
        agree += std::abs(numeric - gradient(i)) <= 2e-3 + 2e-2 * std::abs(gradient(i));
    }
    EXPECT_GE(agree, static_cast<int>(0.98 * static_cast<double>(params.size()))) << agree << " of " << params.size();
}

// Accuracy and loss on the device path: DensePass::evaluate over the resident set, in
// chunks that do not divide it, against model::evaluate.
TEST_P(DensePassTest, EvaluationMatchesTheEigenPath)
{
    auto reference = GetParam().make();
    const data::Dataset set = random_dataset(reference->input_dim(), 250, reference->classes(), 31);
    model::Vector params(reference->parameter_count());
    reference->initialize(params, 2);
    const model::Evaluation want = model::evaluate(*reference, params, set, 64);
    auto step = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    const auto got = step.evaluate(view(params), 96);
    EXPECT_NEAR(got.loss, want.loss, 1e-5 * std::max(1.0, want.loss));
    EXPECT_NEAR(got.accuracy, want.accuracy, 1e-6); // a float mean of 0/1 against a double one
}

// The kernels' per-sample head code against the Eigen head on the same scores.
TEST(HeadMath, ColumnHeadsMatchTheEigenHeads)
{
    Rng rng(4);
    const int classes = 7, batch = 9;
    Eigen::MatrixXf scores(classes, batch);
    for (Eigen::Index i = 0; i < scores.size(); ++i)
        scores.data()[i] = static_cast<float>(3 * standard_normal(rng));
    scores(2, 4) = scores(5, 4); // a tie for the rival
    std::vector<std::int32_t> labels { 0, 6, 3, 3, 2, 1, 5, 4, 6 };
    for (const model::LossHead head : { model::LossHead::SoftmaxCrossEntropy, model::LossHead::MulticlassHinge }) {
        Eigen::MatrixXf want_grad;
        const double want = model::head_loss(head, scores, labels, &want_grad);
        gpu::HostDenseOps ops;
        Eigen::MatrixXf grad(classes, batch);
        std::vector<float> per_sample(batch);
        ops.loss_head(head, scores.data(), labels.data(), classes, batch, grad.data(), per_sample.data());
        float mean = 0;
        ops.mean(per_sample.data(), batch, &mean);
        EXPECT_NEAR(mean, want, 1e-5 * std::max(1.0, std::abs(want)));
        expect_close(grad.data(), want_grad.data(), static_cast<std::size_t>(grad.size()), 1e-6, "head gradient");
    }
}

// HostDenseOps::gemm is the reference for cuBLAS's column-major sgemm, transposes and
// leading dimensions included: checked against the definition, sum over k of A(i,k) B(k,j).
TEST(HostDenseOps, GemmFollowsBlasConventionsForEveryTranspose)
{
    Rng rng(8);
    const int m = 3, n = 4, k = 5, pad = 2;
    for (const bool ta : { false, true })
        for (const bool tb : { false, true }) {
            const int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
            const int lda = a_rows + pad, ldb = b_rows + pad, ldc = m + pad;
            std::vector<float> a(static_cast<std::size_t>(lda * a_cols)), b(static_cast<std::size_t>(ldb * b_cols)),
                c(static_cast<std::size_t>(ldc * n), 1.0f);
            for (float& v : a)
                v = static_cast<float>(standard_normal(rng));
            for (float& v : b)
                v = static_cast<float>(standard_normal(rng));
            gpu::HostDenseOps ops;
            ops.gemm(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, 0.5f, c.data(), ldc);
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                    double want = 0.5;
                    for (int p = 0; p < k; ++p)
                        want += static_cast<double>(ta ? a[p + i * lda] : a[i + p * lda])
                            * (tb ? b[j + p * ldb] : b[p + j * ldb]);
                    EXPECT_NEAR(c[i + j * ldc], want, 1e-5)
                        << "op(A)" << ta << " op(B)" << tb << " at " << i << "," << j;
                }
            EXPECT_EQ(c[m], 1.0f) << "the padding below C was written";
        }
}

TEST(ResidentStep, RefusesSamplesOutsideTheResidentSet)
{
    auto reference = model::make_softmax_regression(4, 3);
    const data::Dataset set = random_dataset(4, 10, 3, 1);
    auto step = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    model::Vector params = model::Vector::Zero(reference->parameter_count()), gradient = params;
    const std::vector<std::int64_t> outside { 2, 10 };
    EXPECT_THROW(step.loss_and_gradient(view(params), outside, view(gradient)), std::out_of_range);
}

// x_o measured as Algorithm 2 needs it: on a device of bounded memory (the host reference
// with a capacity), the probe's answer is a batch whose step runs and one more sample is a
// batch whose step does not fit; the probe gives its buffers back afterwards (workers that
// share a device probe one after another), and a step's memory grows with its batch alone.
TEST(ResidentStep, ProbesTheLargestBatchItsDeviceHolds)
{
    auto reference = model::make_mlp(12, { 16, 8 }, 5);
    const data::Dataset set = random_dataset(12, 200, 5, 3);
    const std::size_t resident = [&] {
        auto unbounded = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
        return unbounded.reading().own_bytes;
    }();
    auto step = step_on(std::make_unique<gpu::HostDenseOps>(resident + 40000), *reference, set);
    EXPECT_EQ(step.reading().own_bytes, resident);
    EXPECT_EQ(step.reading().total_bytes, resident + 40000);

    const std::int32_t limit = step.probe_batch_limit(100000);
    ASSERT_GT(limit, 1);
    ASSERT_LT(limit, 100000);
    EXPECT_EQ(step.reading().own_bytes, resident); // no batch buffers kept

    model::Vector params = model::Vector::Constant(reference->parameter_count(), 0.01f), gradient = params;
    const auto batch_of = [](std::int32_t n) {
        std::vector<std::int64_t> samples(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < samples.size(); ++i)
            samples[i] = static_cast<std::int64_t>(i % 200);
        return samples;
    };
    EXPECT_NO_THROW(step.loss_and_gradient(view(params), batch_of(limit), view(gradient)));
    EXPECT_LE(*step.reading().used_bytes, resident + 40000);
    EXPECT_THROW(step.loss_and_gradient(view(params), batch_of(limit + 1), view(gradient)), gpu::OutOfDeviceMemory);

    // A cap that fits is the answer; a device with no room for one sample gives 0.
    EXPECT_EQ(step.probe_batch_limit(limit), limit);
    auto full = step_on(std::make_unique<gpu::HostDenseOps>(resident + 8), *reference, set);
    EXPECT_EQ(full.probe_batch_limit(64), 0);
}

// Steps replayed from graphs (the host reference records closures as CUDA records a graph)
// give what eager steps give, batch after batch with new parameters and samples, through
// batch sizes that grow the buffers (the graphs are dropped and captured again) and an
// evaluation in between; nothing is allocated while a graph is captured.
TEST(ResidentStep, GraphReplaysGiveTheEagerStepsResults)
{
    auto reference = model::make_mlp(12, { 16, 8 }, 5);
    const data::Dataset set = random_dataset(12, 200, 5, 4);
    auto graphs = std::make_unique<gpu::HostDenseOps>(std::nullopt, true);
    gpu::HostDenseOps& recorder = *graphs;
    auto replayed = step_on(std::move(graphs), *reference, set);
    auto eager = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    model::Vector params(reference->parameter_count()), want = params, got = params;
    Rng rng(21);
    for (const int batch : { 8, 8, 8, 8, 16, 8, 16, 16, 16, 4, 4, 4, 32, 8 }) {
        SCOPED_TRACE(batch);
        reference->initialize(params, rng());
        const std::vector<std::int64_t> samples = random_samples(rng, batch, 200);
        EXPECT_EQ(replayed.loss_and_gradient(view(params), samples, view(got)),
            eager.loss_and_gradient(view(params), samples, view(want)));
        EXPECT_EQ(got, want);
        if (batch == 32) {
            EXPECT_EQ(replayed.evaluate(view(params), 64).accuracy, eager.evaluate(view(params), 64).accuracy);
        }
    }
    EXPECT_GE(recorder.replays(), 7) << "most steps ran from a graph";
}

// A step given the buffers the caller pinned copies straight from and to them, with the
// results of one that copies through Staging memory, graphs and all; other buffers still go
// through Staging memory; a range pinned already is refused (the copies then go through
// Staging memory too), and the pins go with the step.
TEST(ResidentStep, PinnedBuffersGiveTheStagedStepsResults)
{
    auto reference = model::make_mlp(12, { 16, 8 }, 5);
    const data::Dataset set = random_dataset(12, 200, 5, 7);
    const int pinned_before = gpu::HostDenseOps::pinned_host_ranges();
    model::Vector params(reference->parameter_count()), want = params, got = params, other = params;
    {
        auto pinned = step_on(std::make_unique<gpu::HostDenseOps>(std::nullopt, true), *reference, set);
        auto staged = step_on(std::make_unique<gpu::HostDenseOps>(std::nullopt, true), *reference, set);
        ASSERT_TRUE(pinned.pin_host_buffers(view(params), view(got)));
        EXPECT_EQ(gpu::HostDenseOps::pinned_host_ranges(), pinned_before + 2);
        auto refused = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
        EXPECT_FALSE(refused.pin_host_buffers(view(params), view(want))) << "params are pinned already";
        EXPECT_EQ(gpu::HostDenseOps::pinned_host_ranges(), pinned_before + 3) << "want's range is free";
        Rng rng(23);
        for (const int batch : { 8, 8, 8, 16, 16, 8 }) {
            SCOPED_TRACE(batch);
            reference->initialize(params, rng());
            const std::vector<std::int64_t> samples = random_samples(rng, batch, 200);
            const double loss = staged.loss_and_gradient(view(params), samples, view(want));
            EXPECT_EQ(pinned.loss_and_gradient(view(params), samples, view(got)), loss);
            EXPECT_EQ(got, want);
            EXPECT_EQ(pinned.loss_and_gradient(view(params), samples, view(other)), loss) << "into a buffer not pinned";
            EXPECT_EQ(other, want);
            EXPECT_EQ(refused.loss_and_gradient(view(params), samples, view(other)), loss);
            EXPECT_EQ(other, want);
        }
        EXPECT_THROW(pinned.pin_host_buffers(view(params), std::span<float>(got.data(), 3)), std::invalid_argument);
        gpu::HostDenseOps ops;
        EXPECT_FALSE(ops.pin_host(want.data(), 0)) << "an empty range, as CUDA refuses it";
    }
    EXPECT_EQ(gpu::HostDenseOps::pinned_host_ranges(), pinned_before);
}

// A capture the device could not record (on a GPU: invalidated by another thread's call)
// leaves its step to run without a graph, with the eager step's result, and that batch size
// is not captured again; other sizes still are, each at its first step.
TEST(ResidentStep, AFailedCaptureRunsTheStepWithoutAGraph)
{
    auto reference = model::make_mlp(12, { 16, 8 }, 5);
    const data::Dataset set = random_dataset(12, 200, 5, 5);
    auto graphs = std::make_unique<gpu::HostDenseOps>(std::nullopt, true);
    gpu::HostDenseOps& recorder = *graphs;
    recorder.fail_captures(1);
    auto replayed = step_on(std::move(graphs), *reference, set);
    auto eager = step_on(std::make_unique<gpu::HostDenseOps>(), *reference, set);
    model::Vector params(reference->parameter_count()), want = params, got = params;
    Rng rng(22);
    const auto run = [&](int batch) {
        SCOPED_TRACE(batch);
        reference->initialize(params, rng());
        std::vector<std::int64_t> samples(static_cast<std::size_t>(batch));
        std::iota(samples.begin(), samples.end(), std::int64_t { 3 });
        EXPECT_EQ(replayed.loss_and_gradient(view(params), samples, view(got)),
            eager.loss_and_gradient(view(params), samples, view(want)));
        EXPECT_EQ(got, want);
    };
    for (int i = 0; i < 4; ++i)
        run(8); // the first capture fails (after the untimed first run): all of 8 run eagerly
    EXPECT_EQ(recorder.replays(), 0);
    for (int i = 0; i < 4; ++i)
        run(16); // captured at its first step, replayed every time
    EXPECT_EQ(recorder.replays(), 4);
}

// Workers computing at once (the real mode) never allocate or free a buffer while another
// captures a graph: a CUDA free in the middle of another thread's capture can invalidate it.
TEST(ResidentStep, NoWorkerAllocatesWhileAnotherCaptures)
{
    auto reference = model::make_mlp(12, { 16, 8 }, 5);
    const data::Dataset set = random_dataset(12, 200, 5, 6);
    const int before = gpu::HostDenseOps::allocations_during_captures();
    std::vector<std::thread> workers;
    workers.reserve(4);
    for (int w = 0; w < 4; ++w)
        workers.emplace_back([&, w] {
            auto step = step_on(std::make_unique<gpu::HostDenseOps>(std::nullopt, true), *reference, set);
            model::Vector params = model::Vector::Constant(reference->parameter_count(), 0.01f), gradient = params;
            for (int round = 0; round < 3; ++round)
                for (int batch = 1 + w; batch <= 64; batch += 3) { // growing: buffers move all along
                    std::vector<std::int64_t> samples(static_cast<std::size_t>(batch));
                    std::iota(samples.begin(), samples.end(), std::int64_t { 0 });
                    step.loss_and_gradient(view(params), samples, view(gradient));
                    step.loss_and_gradient(view(params), samples, view(gradient)); // captured
                }
        });
    for (std::thread& worker : workers)
        worker.join();
    EXPECT_EQ(gpu::HostDenseOps::allocations_during_captures(), before);
}

// An allocation that fails leaves its buffer empty: a later, smaller reserve allocates anew
// rather than returning the null the failed one left (issue 46, item 7).
TEST(OpsBuffer, AFailedGrowthLeavesAnEmptyBufferThatGrowsAgain)
{
    gpu::HostDenseOps ops(4096);
    gpu::OpsBuffer<float> buffer(ops, gpu::Memory::Compute);
    ASSERT_NE(buffer.reserve(100), nullptr);
    EXPECT_THROW(buffer.reserve(100000), gpu::OutOfDeviceMemory);
    EXPECT_EQ(buffer.size(), 0u);
    EXPECT_EQ(buffer.data(), nullptr);
    EXPECT_NE(buffer.reserve(50), nullptr);
    EXPECT_EQ(ops.reading().own_bytes, 50 * sizeof(float));
}

TEST(ResidentStep, ReadingsBecomeTheRecordsGpuColumns)
{
    gpu::DeviceReading reading;
    reading.own_bytes = 1'500'000'000;
    EXPECT_EQ(gpu::gpu_use(reading), (GpuUse { 1.5, std::nullopt, std::nullopt }));
    reading.used_bytes = 20'000'000'000;
    reading.total_bytes = 80'000'000'000;
    reading.utilization = 0.5;
    EXPECT_EQ(gpu::gpu_use(reading), (GpuUse { 1.5, 0.25, 0.5 }));
}

} // namespace
