#pragma once

#include "model/loss_head_kind.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace fulcrum::gpu {

// Where a buffer of DenseOps lives: Compute memory is where the operations run (a GPU's
// memory for the CUDA implementation); Staging memory is host memory the copies go through
// (page-locked for CUDA, so that they run asynchronously on the worker's stream).
enum class Memory { Compute, Staging };

// What a DenseOps' device holds now: this DenseOps' own Compute buffers and, where the
// device reports them, the memory every process has in use on it, its size and its
// utilisation (NVML's share of time a kernel ran, over its last sample period).
struct DeviceReading {
    std::size_t own_bytes = 0;
    std::optional<std::size_t> used_bytes;
    std::optional<std::size_t> total_bytes;
    std::optional<double> utilization;
};

// The operations a dense network's training step is made of, over column-major float
// buffers in Compute memory. DensePass and ResidentStep sequence them; HostDenseOps runs
// them on the CPU, so any machine's tests check the sequence a GPU runs. Operations may be
// queued: a result is only read after finish().
class DenseOps {
public:
    virtual ~DenseOps() = default;

    // Throws OutOfDeviceMemory where Compute memory has no room for `bytes`.
    virtual void* allocate(Memory where, std::size_t bytes) = 0;
    virtual void release(Memory where, void* buffer) noexcept = 0;
    // Staging -> Compute and back. `staging` may also be host memory pinned with pin_host.
    virtual void copy_in(void* compute, const void* staging, std::size_t bytes) = 0;
    virtual void copy_out(void* staging, const void* compute, std::size_t bytes) = 0;
    // Page-locks host memory the caller owns, so that copies from and to it run as Staging
    // memory's do, without a copy through Staging memory; false where the device will not
    // (a range overlapping one pinned already, say): the caller then copies through Staging
    // memory. The memory stays where it is until unpin_host, which comes before it is freed.
    virtual bool pin_host(const void* host, std::size_t bytes) = 0;
    virtual void unpin_host(const void* host) noexcept = 0;
    // Waits for every queued operation; a failure of any is thrown here (gpu::DeviceError).
    virtual void finish() = 0;
    // The device time from start_timing() to the last operation queued before finish().
    virtual void start_timing() = 0;
    virtual double timed_seconds() = 0;

    // features(:, j) = dataset(:, samples[j]) and labels[j] = dataset_labels[samples[j]].
    virtual void gather_samples(const float* dataset, const std::int32_t* dataset_labels, int dim,
        const std::int64_t* samples, int count, float* features, std::int32_t* labels)
        = 0;
    // C = op(A) op(B) + beta C, as BLAS sgemm: column-major, op transposes when asked.
    virtual void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, int lda, const float* b,
        int ldb, float beta, float* c, int ldc)
        = 0;
    // z(:, j) += bias for every column j, then max(z, 0) when `relu`.
    virtual void add_bias(float* z, const float* bias, int rows, int cols, bool relu) = 0;
    // delta *= (activation > 0): ReLU's derivative, read off its output.
    virtual void relu_backward(float* delta, const float* activation, std::int64_t count) = 0;
    // out(i) = sum over j of m(i, j): a bias's gradient from the layer's deltas.
    virtual void row_sums(const float* m, int rows, int cols, float* out) = 0;
    // per_sample[j] = the loss of column j; grad (when non-null) = d(mean loss)/d(scores).
    virtual void loss_head(model::LossHead head, const float* scores, const std::int32_t* labels, int classes,
        int batch, float* grad, float* per_sample)
        = 0;
    // per_sample[j] = 1 where column j's top score is its label, else 0.
    virtual void correct_predictions(
        const float* scores, const std::int32_t* labels, int classes, int batch, float* per_sample)
        = 0;
    // *out = the mean of v[0, count).
    virtual void mean(const float* v, int count, float* out) = 0;

    virtual DeviceReading reading() = 0;
    // Where the operations run, for the job's events: "cuda:0, 64 SMs in a green context".
    virtual std::string placement() const = 0;

    // Graphs (CUDA graphs): the operations queued between begin_capture() and
    // end_capture(key) are recorded rather than run, and replay(key) queues all of them again
    // as one launch, reading every buffer anew. They hold buffer addresses, so a graph is
    // dropped when a buffer it uses moves. Ops without graphs record nothing and replay
    // nothing (replay returns false). end_capture returns false where the device could
    // not record the operations (another thread's call invalidated the capture, say): they
    // did not run, no graph is kept, and the caller runs them again without one.
    virtual bool can_capture() const { return false; }
    virtual void begin_capture() { }
    virtual bool end_capture(std::int64_t /*key*/) { return false; }
    virtual bool replay(std::int64_t /*key*/) { return false; }
    virtual bool has_graph(std::int64_t /*key*/) const { return false; }
    virtual void drop_graphs() { }
};

// Held around every allocation and release of a device's buffers and around every capture,
// in the whole process. In the real mode the workers run their steps at once, on the
// barrier engine's threads; cudaFree and cudaFreeHost synchronise the device, and one
// worker's free in the middle of another's capture can invalidate that capture.
std::mutex& device_memory_mutex();

// A buffer of T in one of a DenseOps' memories that grows on demand and is released with it.
template <typename T> class OpsBuffer {
public:
    OpsBuffer(DenseOps& ops, Memory where)
        : ops_(&ops)
        , where_(where)
    {
    }
    OpsBuffer(const OpsBuffer&) = delete;
    OpsBuffer& operator=(const OpsBuffer&) = delete;
    OpsBuffer(OpsBuffer&& other) noexcept
        : ops_(other.ops_)
        , where_(other.where_)
        , data_(other.data_)
        , size_(other.size_)
    {
        other.data_ = nullptr;
        other.size_ = 0;
    }
    OpsBuffer& operator=(OpsBuffer&&) = delete;
    ~OpsBuffer()
    {
        if (data_)
            ops_->release(where_, data_);
    }

    // At least `count` elements; earlier contents are not kept when it grows.
    T* reserve(std::size_t count)
    {
        if (count > size_) {
            clear(); // an allocation that throws leaves an empty buffer, never a stale size
            data_ = static_cast<T*>(ops_->allocate(where_, count * sizeof(T)));
            size_ = count;
        }
        return data_;
    }
    // Gives the memory back (the next reserve allocates anew).
    void clear() noexcept
    {
        if (data_)
            ops_->release(where_, data_);
        data_ = nullptr;
        size_ = 0;
    }
    T* data() const { return data_; }
    std::size_t size() const { return size_; }
    void swap(OpsBuffer& other) noexcept
    {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
    }

private:
    DenseOps* ops_;
    Memory where_;
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace fulcrum::gpu
