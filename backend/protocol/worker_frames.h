#pragma once

// The binary frames between a job and its remote workers (fulcrum-worker): a task (the
// parameters and a batch size) and its result (the gradient and what the worker
// measured). Parameters and gradients are float32 in the platform's order, which the
// build requires to be little-endian; the header is fixed-size and little-endian too.
// Text frames are always JSON objects, so a frame that starts with a magic below is binary.

#include "common/records.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::protocol {

// A worker connection reads frames up to this size (a model of 64 M parameters).
inline constexpr std::size_t kMaxWorkerFrameBytes = 256u << 20;

struct WorkerTask {
    std::int64_t iteration = 0;
    std::int32_t batch_size = 0;
    std::vector<float> parameters;
};

struct WorkerResult {
    std::int64_t iteration = 0;
    std::int32_t batch_size = 0;
    double loss = 0;
    double compute_s = 0; // the worker's own wall time for the batch
    double cpu_share = 0; // CPU time over wall time while computing (0..1)
    double memory_share = 0; // available memory over total on its host (/proc/meminfo)
    std::vector<float> gradient;
    // A worker on a GPU (fulcrum-worker --device cuda:N) appends its device's reading after
    // the gradient: "FGPU" and three doubles, NaN for one it could not measure.
    GpuUse gpu;
};

std::string encode_task(std::int64_t iteration, std::int32_t batch_size, std::span<const float> parameters);
std::string encode_result(const WorkerResult& result);
// Unset, with `error` saying why, for a frame that is not a whole task or result.
std::optional<WorkerTask> decode_task(std::string_view frame, std::string* error);
std::optional<WorkerResult> decode_result(std::string_view frame, std::string* error);
bool is_worker_frame(std::string_view frame);

} // namespace fulcrum::protocol
