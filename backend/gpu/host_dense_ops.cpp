#include "gpu/host_dense_ops.h"

#include "common/eigen_core.h"
#include "gpu/device_error.h"
#include "gpu/head_math.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

namespace fulcrum::gpu {

namespace {

using ConstStrided = Eigen::Map<const Eigen::MatrixXf, 0, Eigen::OuterStride<>>;
using Strided = Eigen::Map<Eigen::MatrixXf, 0, Eigen::OuterStride<>>;

std::size_t at(int row, int col, int ld)
{
    return static_cast<std::size_t>(row) + static_cast<std::size_t>(col) * static_cast<std::size_t>(ld);
}

} // namespace

void HostDenseOps::run(std::function<void()> op)
{
    if (recording_)
        recording_->push_back(std::move(op));
    else
        op();
}

namespace {

std::atomic<int> captures_in_progress { 0 };
std::atomic<int> overlapping_allocations { 0 };

// Counts an allocation or release made while another HostDenseOps captures.
void note_memory_call(bool own_capture)
{
    if (captures_in_progress.load() > (own_capture ? 1 : 0))
        ++overlapping_allocations;
}

} // namespace

int HostDenseOps::allocations_during_captures()
{
    return overlapping_allocations.load();
}

void HostDenseOps::begin_capture()
{
    recording_.emplace();
    ++captures_in_progress;
}

bool HostDenseOps::end_capture(std::int64_t key)
{
    --captures_in_progress;
    std::vector<std::function<void()>> recorded = std::move(*recording_);
    recording_.reset();
    if (failing_captures_ > 0) {
        --failing_captures_;
        return false;
    }
    graphs_[key] = std::move(recorded);
    return true;
}

bool HostDenseOps::replay(std::int64_t key)
{
    const auto graph = graphs_.find(key);
    if (graph == graphs_.end())
        return false;
    // CUDA would run it on freed memory: the caller must drop its graphs when a buffer goes.
    if (stale_graphs_)
        throw std::logic_error("a graph replayed after a buffer was released: it holds the old address");
    for (const auto& op : graph->second)
        op();
    ++replays_;
    return true;
}

void* HostDenseOps::allocate(Memory where, std::size_t bytes)
{
    note_memory_call(recording_.has_value());
    if (recording_) // a graph holds addresses: its buffers must exist before it is captured
        throw std::logic_error("an allocation of " + std::to_string(bytes) + " bytes while a graph is captured");
    if (where == Memory::Compute && capacity_ && bytes > *capacity_ - compute_bytes_)
        throw OutOfDeviceMemory("host reference: an allocation of " + std::to_string(bytes) + " bytes does not fit: "
            + std::to_string(compute_bytes_) + " of " + std::to_string(*capacity_) + " bytes are in use");
    void* buffer = ::operator new (bytes, std::align_val_t { 64 });
    if (where == Memory::Compute) {
        compute_buffers_.emplace(buffer, bytes);
        compute_bytes_ += bytes;
    }
    return buffer;
}

void HostDenseOps::release(Memory where, void* buffer) noexcept
{
    note_memory_call(recording_.has_value());
    stale_graphs_ = stale_graphs_ || !graphs_.empty();
    if (where == Memory::Compute)
        if (const auto found = compute_buffers_.find(buffer); found != compute_buffers_.end()) {
            compute_bytes_ -= found->second;
            compute_buffers_.erase(found);
        }
    ::operator delete (buffer, std::align_val_t { 64 });
}

DeviceReading HostDenseOps::reading()
{
    DeviceReading r;
    r.own_bytes = compute_bytes_;
    if (capacity_) {
        r.used_bytes = compute_bytes_;
        r.total_bytes = *capacity_;
    }
    return r;
}

void HostDenseOps::copy_in(void* compute, const void* staging, std::size_t bytes)
{
    run([=] { std::memcpy(compute, staging, bytes); });
}

void HostDenseOps::copy_out(void* staging, const void* compute, std::size_t bytes)
{
    run([=] { std::memcpy(staging, compute, bytes); });
}

namespace {

struct PinnedRanges {
    std::mutex mutex;
    std::map<const char*, std::size_t> ranges; // start -> bytes
};

PinnedRanges& pinned_ranges()
{
    static PinnedRanges pinned;
    return pinned;
}

} // namespace

bool HostDenseOps::pin_host(const void* host, std::size_t bytes)
{
    note_memory_call(recording_.has_value());
    if (recording_) // as an allocation: CUDA may refuse the call while a graph is captured
        throw std::logic_error("host memory pinned while a graph is captured");
    if (bytes == 0)
        return false; // as cudaHostRegister refuses an empty range
    PinnedRanges& pinned = pinned_ranges();
    const std::lock_guard lock(pinned.mutex);
    const auto* begin = static_cast<const char*>(host);
    auto next = pinned.ranges.lower_bound(begin);
    if (next != pinned.ranges.end() && next->first < begin + bytes)
        return false;
    if (next != pinned.ranges.begin() && std::prev(next)->first + std::prev(next)->second > begin)
        return false;
    pinned.ranges.emplace(begin, bytes);
    return true;
}

void HostDenseOps::unpin_host(const void* host) noexcept
{
    note_memory_call(recording_.has_value());
    PinnedRanges& pinned = pinned_ranges();
    const std::lock_guard lock(pinned.mutex);
    pinned.ranges.erase(static_cast<const char*>(host));
}

int HostDenseOps::pinned_host_ranges()
{
    PinnedRanges& pinned = pinned_ranges();
    const std::lock_guard lock(pinned.mutex);
    return static_cast<int>(pinned.ranges.size());
}

void HostDenseOps::start_timing()
{
    started_ = std::chrono::steady_clock::now();
}

double HostDenseOps::timed_seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void HostDenseOps::gather_samples(const float* dataset, const std::int32_t* dataset_labels, int dim,
    const std::int64_t* samples, int count, float* features, std::int32_t* labels)
{
    run([=] {
        const auto column = static_cast<std::size_t>(dim);
        for (int j = 0; j < count; ++j) {
            const auto sample = static_cast<std::size_t>(samples[j]);
            std::memcpy(
                features + column * static_cast<std::size_t>(j), dataset + column * sample, column * sizeof(float));
            labels[j] = dataset_labels[sample];
        }
    });
}

void HostDenseOps::gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, int lda,
    const float* b, int ldb, float beta, float* c, int ldc)
{
    run([=] {
        // As stored: A is m x k (k x m when transposed), B is k x n (n x k when transposed).
        const ConstStrided stored_a(a, transpose_a ? k : m, transpose_a ? m : k, Eigen::OuterStride<>(lda));
        const ConstStrided stored_b(b, transpose_b ? n : k, transpose_b ? k : n, Eigen::OuterStride<>(ldb));
        Strided out(c, m, n, Eigen::OuterStride<>(ldc));
        if (beta == 0.0f)
            out.setZero();
        else
            out *= beta;
        if (transpose_a && transpose_b)
            out.noalias() += stored_a.transpose() * stored_b.transpose();
        else if (transpose_a)
            out.noalias() += stored_a.transpose() * stored_b;
        else if (transpose_b)
            out.noalias() += stored_a * stored_b.transpose();
        else
            out.noalias() += stored_a * stored_b;
    });
}

void HostDenseOps::add_bias(float* z, const float* bias, int rows, int cols, bool relu)
{
    run([=] {
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) {
                float& v = z[at(i, j, rows)];
                v += bias[i];
                if (relu)
                    v = std::max(v, 0.0f);
            }
    });
}

void HostDenseOps::relu_backward(float* delta, const float* activation, std::int64_t count)
{
    run([=] {
        for (std::int64_t i = 0; i < count; ++i)
            if (!(activation[i] > 0.0f))
                delta[i] = 0.0f;
    });
}

void HostDenseOps::row_sums(const float* m, int rows, int cols, float* out)
{
    run([=] {
        std::fill(out, out + rows, 0.0f);
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i)
                out[i] += m[at(i, j, rows)];
    });
}

void HostDenseOps::loss_head(model::LossHead head, const float* scores, const std::int32_t* labels, int classes,
    int batch, float* grad, float* per_sample)
{
    run([=] {
        const float inv_batch = 1.0f / static_cast<float>(batch);
        for (int j = 0; j < batch; ++j) {
            const float* column = scores + at(0, j, classes);
            float* column_grad = grad ? grad + at(0, j, classes) : nullptr;
            per_sample[j] = head == model::LossHead::SoftmaxCrossEntropy
                ? softmax_cross_entropy_column(column, classes, labels[j], inv_batch, column_grad)
                : multiclass_hinge_column(column, classes, labels[j], inv_batch, column_grad);
        }
    });
}

void HostDenseOps::correct_predictions(
    const float* scores, const std::int32_t* labels, int classes, int batch, float* per_sample)
{
    run([=] {
        for (int j = 0; j < batch; ++j)
            per_sample[j] = correct_column(scores + at(0, j, classes), classes, labels[j]);
    });
}

void HostDenseOps::mean(const float* v, int count, float* out)
{
    run([=] {
        double sum = 0;
        for (int i = 0; i < count; ++i)
            sum += v[i];
        *out = count > 0 ? static_cast<float>(sum / count) : 0.0f;
    });
}

} // namespace fulcrum::gpu
