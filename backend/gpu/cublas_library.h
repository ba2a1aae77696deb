#pragma once

#include <cublas_v2.h>
#include <string>

namespace fulcrum::gpu {

// cuBLAS, opened with dlopen on first use: linked at build time, its 200 MB would be mapped
// into every Fulcrum process, GPU or not, and fulcrumd would not start where the CUDA
// libraries are missing. Only the functions Fulcrum calls are resolved.
struct CublasLibrary {
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    decltype(&cublasSetMathMode) set_math_mode = nullptr;
    decltype(&cublasSgemm_v2) sgemm = nullptr;
    decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
    decltype(&cublasGetStatusString) status_string = nullptr;
};

// The loaded library; throws DeviceError naming the file and dlerror()'s words where it
// cannot be opened (the CUDA 13 runtime libraries are not installed or not on the path).
// Looked for at $FULCRUM_CUBLAS (a file), by soname (LD_LIBRARY_PATH, ld.so's cache), then
// in $CUDA_HOME/lib64 and /usr/local/cuda/lib64.
const CublasLibrary& cublas();

std::string cublas_status_text(cublasStatus_t status);

} // namespace fulcrum::gpu
