#pragma once

#include "gpu/dense_ops.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace fulcrum::gpu {

// DenseOps on the CPU, in host memory, one operation at a time: the reference the CUDA
// implementation is checked against, and what checks DensePass on machines without a GPU.
class HostDenseOps final : public DenseOps {
public:
    // `compute_capacity` bounds Compute memory as a device's size would (OutOfDeviceMemory
    // beyond it); unset, host memory is the bound. With `graphs`, captures record the
    // operations as closures and replays run them, as CUDA graphs do, so any machine's
    // tests check what ResidentStep captures.
    explicit HostDenseOps(std::optional<std::size_t> compute_capacity = std::nullopt, bool graphs = false)
        : capacity_(compute_capacity)
        , graphs_enabled_(graphs)
    {
    }
    HostDenseOps(const HostDenseOps&) = delete;
    HostDenseOps& operator=(const HostDenseOps&) = delete;
    ~HostDenseOps() override = default;

    void* allocate(Memory where, std::size_t bytes) override;
    void release(Memory where, void* buffer) noexcept override;
    void copy_in(void* compute, const void* staging, std::size_t bytes) override;
    void copy_out(void* staging, const void* compute, std::size_t bytes) override;
    // Pinning changes nothing on the host; the ranges are kept, as a driver keeps them, so
    // that an overlapping one is refused and tests see what is pinned.
    bool pin_host(const void* host, std::size_t bytes) override;
    void unpin_host(const void* host) noexcept override;
    void finish() override { }
    void start_timing() override;
    double timed_seconds() override;

    void gather_samples(const float* dataset, const std::int32_t* dataset_labels, int dim, const std::int64_t* samples,
        int count, float* features, std::int32_t* labels) override;
    void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
        float beta, float* c, int ldc) override;
    void add_bias(float* z, const float* bias, int rows, int cols, bool relu) override;
    void relu_backward(float* delta, const float* activation, std::int64_t count) override;
    void row_sums(const float* m, int rows, int cols, float* out) override;
    void loss_head(model::LossHead head, const float* scores, const std::int32_t* labels, int classes, int batch,
        float* grad, float* per_sample) override;
    void correct_predictions(
        const float* scores, const std::int32_t* labels, int classes, int batch, float* per_sample) override;
    void mean(const float* v, int count, float* out) override;
    DeviceReading reading() override;
    std::string placement() const override { return "the host (reference)"; }

    bool can_capture() const override { return graphs_enabled_; }
    void begin_capture() override;
    bool end_capture(std::int64_t key) override;
    bool replay(std::int64_t key) override;
    bool has_graph(std::int64_t key) const override { return graphs_.contains(key); }
    void drop_graphs() override
    {
        graphs_.clear();
        stale_graphs_ = false;
    }
    // How many steps ran from a recorded graph.
    int replays() const { return replays_; }
    // Fault injection: the next `count` captures end as an invalidated CUDA capture does,
    // with nothing recorded.
    void fail_captures(int count) { failing_captures_ = count; }
    // Across every HostDenseOps of the process: allocations and releases made by one while
    // another was capturing, which a CUDA device may refuse (its capture is invalidated).
    static int allocations_during_captures();
    // Host ranges pinned now, across every HostDenseOps of the process.
    static int pinned_host_ranges();

private:
    void run(std::function<void()> op); // now, or into the graph being captured

    std::chrono::steady_clock::time_point started_ {};
    std::optional<std::vector<std::function<void()>>> recording_;
    std::map<std::int64_t, std::vector<std::function<void()>>> graphs_;
    int replays_ = 0;
    int failing_captures_ = 0;
    bool stale_graphs_ = false; // a buffer was released while graphs were held
    std::optional<std::size_t> capacity_;
    bool graphs_enabled_;
    std::unordered_map<void*, std::size_t> compute_buffers_;
    std::size_t compute_bytes_ = 0;
};

} // namespace fulcrum::gpu
