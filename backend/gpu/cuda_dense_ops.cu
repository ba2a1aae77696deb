// DenseOps on one CUDA device: cuBLAS for the matrix products, the kernels below for the
// rest, every operation queued on the worker's own stream.
#include "gpu/cublas_library.h"
#include "gpu/cuda_devices.h"
#include "gpu/device_error.h"
#include "gpu/head_math.h"
#include "gpu/nvml_library.h"
#include "gpu/sm_partition.h"

#include <algorithm>
#include <cuda_runtime.h>
#include <map>
#include <string>
#include <unordered_map>

namespace fulcrum::gpu {

namespace {

constexpr int kThreads = 256;

// Enough blocks for `count` elements at kThreads each, capped: the kernels loop over the rest.
unsigned blocks_for(std::int64_t count)
{
    const std::int64_t blocks = (count + kThreads - 1) / kThreads;
    return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 65535));
}

__global__ void gather_kernel(const float* dataset, const std::int32_t* dataset_labels, int dim,
    const std::int64_t* samples, int count, float* features, std::int32_t* labels)
{
    const std::int64_t total = static_cast<std::int64_t>(dim) * count;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t j = i / dim, d = i % dim;
        features[i] = dataset[d + samples[j] * dim];
        if (d == 0)
            labels[j] = dataset_labels[samples[j]];
    }
}

__global__ void add_bias_kernel(float* z, const float* bias, int rows, std::int64_t total, bool relu)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const float v = z[i] + bias[i % rows];
        z[i] = relu ? fmaxf(v, 0.0f) : v;
    }
}

__global__ void relu_backward_kernel(float* delta, const float* activation, std::int64_t total)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x)
        if (!(activation[i] > 0.0f))
            delta[i] = 0.0f;
}

// One thread per row; neighbouring threads read neighbouring rows of a column, so the
// column-major reads coalesce.
__global__ void row_sums_kernel(const float* m, int rows, int cols, float* out)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
        float sum = 0;
        for (int j = 0; j < cols; ++j)
            sum += m[i + static_cast<std::int64_t>(j) * rows];
        out[i] = sum;
    }
}

__global__ void loss_head_kernel(bool softmax, const float* scores, const std::int32_t* labels, int classes, int batch,
    float* grad, float* per_sample)
{
    const float inv_batch = 1.0f / static_cast<float>(batch);
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < batch; j += gridDim.x * blockDim.x) {
        const float* column = scores + static_cast<std::int64_t>(j) * classes;
        float* column_grad = grad ? grad + static_cast<std::int64_t>(j) * classes : nullptr;
        per_sample[j] = softmax ? softmax_cross_entropy_column(column, classes, labels[j], inv_batch, column_grad)
                                : multiclass_hinge_column(column, classes, labels[j], inv_batch, column_grad);
    }
}

__global__ void correct_kernel(const float* scores, const std::int32_t* labels, int classes, int batch, float* out)
{
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < batch; j += gridDim.x * blockDim.x)
        out[j] = correct_column(scores + static_cast<std::int64_t>(j) * classes, classes, labels[j]);
}

// One block: a fixed summation order, so the same batch gives the same loss every time.
__global__ void mean_kernel(const float* v, int count, float* out)
{
    __shared__ float partial[kThreads];
    float sum = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x)
        sum += v[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = count > 0 ? partial[0] / static_cast<float>(count) : 0.0f;
}

class CudaDenseOps final : public DenseOps {
public:
    CudaDenseOps(int device, std::optional<int> sms, bool graphs, bool strict_sms)
        : device_(device)
        , graphs_enabled_(graphs)
        , placement_("cuda:" + std::to_string(device) + ", the whole GPU")
    {
        if (const std::string why = absent_device_reason(device); !why.empty())
            throw DeviceError("cuda:" + std::to_string(device) + " does not exist: " + why);
        const CublasLibrary& blas = cublas();
        const std::lock_guard memory(device_memory_mutex());
        try {
            acquire(blas, sms, strict_sms);
        } catch (...) { // no destructor runs for a constructor that throws
            release_resources();
            throw;
        }
    }
    CudaDenseOps(const CudaDenseOps&) = delete;
    CudaDenseOps& operator=(const CudaDenseOps&) = delete;

    ~CudaDenseOps() override
    {
        const std::lock_guard memory(device_memory_mutex());
        release_resources();
    }

    std::string placement() const override { return placement_; }

    bool can_capture() const override { return graphs_enabled_; }
    void begin_capture() override
    {
        bind();
        check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    }
    bool end_capture(std::int64_t key) override
    {
        cudaGraph_t graph = nullptr;
        const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
        cudaGraphExec_t exec = nullptr;
        cudaError_t made = ended == cudaSuccess && graph ? cudaGraphInstantiate(&exec, graph, 0) : ended;
        if (graph)
            cudaGraphDestroy(graph);
        // Uploaded now, ahead of the step's timing, rather than by its first launch.
        if (made == cudaSuccess && (made = cudaGraphUpload(exec, stream_)) != cudaSuccess)
            cudaGraphExecDestroy(exec);
        if (made != cudaSuccess) { // an invalidated capture is not a sticky error: the step runs eagerly
            cudaGetLastError();
            return false;
        }
        if (graphs_.size() >= kMaxGraphs) // a policy wandering over many sizes: start again
            drop_graphs();
        graphs_[key] = exec;
        return true;
    }
    bool has_graph(std::int64_t key) const override { return graphs_.count(key) > 0; } // nvcc builds C++17
    bool replay(std::int64_t key) override
    {
        const auto graph = graphs_.find(key);
        if (graph == graphs_.end())
            return false;
        bind();
        check(cudaGraphLaunch(graph->second, stream_), "cudaGraphLaunch");
        return true;
    }
    void drop_graphs() override
    {
        for (const auto& [key, exec] : graphs_)
            cudaGraphExecDestroy(exec);
        graphs_.clear();
    }

    void* allocate(Memory where, std::size_t bytes) override
    {
        bind();
        void* buffer = nullptr;
        const std::string what = std::string(where == Memory::Compute ? "cudaMalloc" : "cudaMallocHost") + " of "
            + std::to_string(bytes >> 20) + " MiB";
        if (where == Memory::Staging) {
            check(cudaMallocHost(&buffer, bytes), what.c_str());
            return buffer;
        }
        if (const cudaError_t status = cudaMalloc(&buffer, bytes); status == cudaErrorMemoryAllocation) {
            cudaGetLastError(); // not a sticky error: the device goes on
            throw OutOfDeviceMemory(
                "cuda:" + std::to_string(device_) + ": " + what + ": " + cudaGetErrorString(status));
        } else {
            check(status, what.c_str());
        }
        compute_buffers_.emplace(buffer, bytes);
        compute_bytes_ += bytes;
        return buffer;
    }

    void release(Memory where, void* buffer) noexcept override
    {
        select_context();
        if (where == Memory::Staging) {
            cudaFreeHost(buffer);
            return;
        }
        if (const auto found = compute_buffers_.find(buffer); found != compute_buffers_.end()) {
            compute_bytes_ -= found->second;
            compute_buffers_.erase(found);
        }
        cudaFree(buffer);
    }

    // The device's memory as the driver counts it (every process's allocations and
    // contexts), and NVML's utilisation where NVML is present.
    DeviceReading reading() override
    {
        bind();
        DeviceReading r;
        r.own_bytes = compute_bytes_;
        std::size_t free = 0, total = 0;
        check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
        r.used_bytes = total - free;
        r.total_bytes = total;
        if (nvml_device_)
            r.utilization = NvmlLibrary::get()->utilization(nvml_device_);
        return r;
    }

    void copy_in(void* compute, const void* staging, std::size_t bytes) override
    {
        bind();
        check(cudaMemcpyAsync(compute, staging, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (pull)");
    }

    void copy_out(void* staging, const void* compute, std::size_t bytes) override
    {
        bind();
        check(cudaMemcpyAsync(staging, compute, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (push)");
    }

    bool pin_host(const void* host, std::size_t bytes) override
    {
        bind();
        // Portable: the pages are locked for every context, the green contexts' included.
        // cudaHostRegister does not write the memory; its signature takes it as writable.
        if (cudaHostRegister(const_cast<void*>(host), bytes, cudaHostRegisterPortable) != cudaSuccess) {
            cudaGetLastError(); // not a sticky error: the copies go through Staging memory
            return false;
        }
        return true;
    }

    void unpin_host(const void* host) noexcept override
    {
        select_context();
        if (cudaHostUnregister(const_cast<void*>(host)) != cudaSuccess)
            cudaGetLastError();
    }

    void finish() override
    {
        bind();
        check(cudaEventRecord(finished_, stream_), "cudaEventRecord");
        check(cudaEventSynchronize(finished_), "the worker's stream");
    }

    void start_timing() override
    {
        bind();
        check(cudaEventRecord(started_, stream_), "cudaEventRecord");
        timing_ = true;
    }

    double timed_seconds() override
    {
        if (!timing_)
            return 0;
        float ms = 0;
        check(cudaEventElapsedTime(&ms, started_, finished_), "cudaEventElapsedTime");
        return ms / 1e3;
    }

    void gather_samples(const float* dataset, const std::int32_t* dataset_labels, int dim, const std::int64_t* samples,
        int count, float* features, std::int32_t* labels) override
    {
        bind();
        gather_kernel<<<blocks_for(std::int64_t(dim) * count), kThreads, 0, stream_>>>(
            dataset, dataset_labels, dim, samples, count, features, labels);
        launched("gather");
    }

    void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
        float beta, float* c, int ldc) override
    {
        bind();
        const float alpha = 1.0f;
        check_blas(cublas().sgemm(handle_, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                       transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc),
            "cublasSgemm");
    }

    void add_bias(float* z, const float* bias, int rows, int cols, bool relu) override
    {
        bind();
        const std::int64_t total = std::int64_t(rows) * cols;
        add_bias_kernel<<<blocks_for(total), kThreads, 0, stream_>>>(z, bias, rows, total, relu);
        launched("add_bias");
    }

    void relu_backward(float* delta, const float* activation, std::int64_t count) override
    {
        bind();
        relu_backward_kernel<<<blocks_for(count), kThreads, 0, stream_>>>(delta, activation, count);
        launched("relu_backward");
    }

    void row_sums(const float* m, int rows, int cols, float* out) override
    {
        bind();
        row_sums_kernel<<<blocks_for(rows), kThreads, 0, stream_>>>(m, rows, cols, out);
        launched("row_sums");
    }

    void loss_head(model::LossHead head, const float* scores, const std::int32_t* labels, int classes, int batch,
        float* grad, float* per_sample) override
    {
        bind();
        loss_head_kernel<<<blocks_for(batch), kThreads, 0, stream_>>>(
            head == model::LossHead::SoftmaxCrossEntropy, scores, labels, classes, batch, grad, per_sample);
        launched("loss_head");
    }

    void correct_predictions(
        const float* scores, const std::int32_t* labels, int classes, int batch, float* per_sample) override
    {
        bind();
        correct_kernel<<<blocks_for(batch), kThreads, 0, stream_>>>(scores, labels, classes, batch, per_sample);
        launched("correct_predictions");
    }

    void mean(const float* v, int count, float* out) override
    {
        bind();
        mean_kernel<<<1, kThreads, 0, stream_>>>(v, count, out);
        launched("mean");
    }

private:
    // The share, stream, events, cuBLAS handle and workspace; the caller holds the device lock.
    void acquire(const CublasLibrary& blas, std::optional<int> sms, bool strict_sms)
    {
        if (sms) {
            std::string why_not;
            lease_ = lease_sms(device_, *sms, why_not);
            if (!lease_ && strict_sms)
                throw DeviceError("cuda:" + std::to_string(device_) + ": a strict share of " + std::to_string(*sms)
                    + " SMs (sms_strict) cannot be given: " + why_not);
            placement_ = lease_ ? "cuda:" + std::to_string(device_) + ", " + std::to_string(lease_->sms())
                    + " SMs in a green context (asked for " + std::to_string(*sms) + ")"
                                : "cuda:" + std::to_string(device_) + ", the whole GPU shared (asked for "
                    + std::to_string(*sms) + " SMs: " + why_not + ")";
        }
        bind();
        if (lease_)
            stream_ = lease_->stream();
        else
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaEventCreate(&started_), "cudaEventCreate");
        check(cudaEventCreate(&finished_), "cudaEventCreate");
        check_blas(blas.create(&handle_), "cublasCreate");
        check_blas(blas.set_stream(handle_, stream_), "cublasSetStream");
        // A workspace of our own: without one, cuBLAS (12.2 and later) allocates inside a
        // captured graph, which a capture may refuse.
        check(cudaMalloc(&workspace_, kCublasWorkspaceBytes), "cudaMalloc (cuBLAS workspace)");
        check_blas(blas.set_workspace(handle_, workspace_, kCublasWorkspaceBytes), "cublasSetWorkspace");
        // FP32 products: the CPU path's math, to 1e-4 (TF32 would trade that for speed).
        check_blas(blas.set_math_mode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
        if (const NvmlLibrary* nvml = NvmlLibrary::get()) {
            char bus_id[32] = {};
            if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device_) == cudaSuccess)
                nvml_device_ = nvml->device(bus_id);
        }
    }

    // Everything acquire() made, however far it got; the caller holds the device lock.
    void release_resources() noexcept
    {
        select_context();
        drop_graphs();
        if (handle_)
            cublas().destroy(handle_);
        if (workspace_)
            cudaFree(workspace_);
        if (started_)
            cudaEventDestroy(started_);
        if (finished_)
            cudaEventDestroy(finished_);
        if (stream_ && !lease_) // a green context's stream goes with its lease
            cudaStreamDestroy(stream_);
        lease_.reset(); // its green context and stream, under the lock too
    }

    // The calling thread's current device, or the worker's green context: workers' threads
    // come from a pool.
    void bind()
    {
        if (lease_)
            lease_->bind();
        else
            check(cudaSetDevice(device_), "cudaSetDevice");
    }
    void select_context() const noexcept
    {
        if (lease_)
            lease_->bind();
        else
            cudaSetDevice(device_);
    }

    void check(cudaError_t status, const char* what) const
    {
        if (status != cudaSuccess)
            throw DeviceError("cuda:" + std::to_string(device_) + ": " + what + ": " + cudaGetErrorString(status));
    }
    void check_blas(cublasStatus_t status, const char* what) const
    {
        if (status != CUBLAS_STATUS_SUCCESS)
            throw DeviceError("cuda:" + std::to_string(device_) + ": " + what + ": " + cublas_status_text(status));
    }
    void launched(const char* kernel) const { check(cudaGetLastError(), kernel); }

    int device_;
    bool graphs_enabled_;
    std::string placement_;
    std::unique_ptr<SmLease> lease_; // the worker's SMs, when it asked for a share
    cudaStream_t stream_ = nullptr;
    cudaEvent_t started_ = nullptr;
    cudaEvent_t finished_ = nullptr;
    cublasHandle_t handle_ = nullptr;
    // NVIDIA's recommended size for Hopper (4 MiB suffices elsewhere); not in compute_bytes_.
    static constexpr std::size_t kCublasWorkspaceBytes = std::size_t { 32 } << 20;
    void* workspace_ = nullptr;
    bool timing_ = false;
    void* nvml_device_ = nullptr;
    std::unordered_map<void*, std::size_t> compute_buffers_;
    std::size_t compute_bytes_ = 0;
    static constexpr std::size_t kMaxGraphs = 256; // one per batch size the worker ran
    std::map<std::int64_t, cudaGraphExec_t> graphs_;
};

} // namespace

bool built_with_cuda()
{
    return true;
}

std::unique_ptr<DenseOps> make_cuda_dense_ops(int device, std::optional<int> sms, bool graphs, bool strict_sms)
{
    return std::make_unique<CudaDenseOps>(device, sms, graphs, strict_sms);
}

} // namespace fulcrum::gpu
