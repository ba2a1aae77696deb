#include "gpu/cublas_library.h"
#include "gpu/device_error.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace fulcrum::gpu {

namespace {

// The soname of the cuBLAS this build was compiled against (libcublas.so.13 for CUDA 13).
std::string library_name()
{
    return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
}

template <typename F> void resolve(void* handle, const char* symbol, F& out)
{
    void* address = dlsym(handle, symbol);
    if (!address)
        throw DeviceError(library_name() + " lacks " + symbol + ": " + dlerror());
    out = reinterpret_cast<F>(address);
}

CublasLibrary open_cublas()
{
    // The toolkit's own folders last: NVIDIA's installer does not add them to ld.so's path.
    std::vector<std::string> candidates;
    if (const char* file = std::getenv("FULCRUM_CUBLAS"); file && *file)
        candidates.emplace_back(file);
    candidates.push_back(library_name());
    if (const char* toolkit = std::getenv("CUDA_HOME"); toolkit && *toolkit)
        candidates.push_back(std::string(toolkit) + "/lib64/" + library_name());
    candidates.push_back("/usr/local/cuda/lib64/" + library_name());
    void* handle = nullptr;
    std::string first_error;
    for (const std::string& candidate : candidates) {
        if ((handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)))
            break;
        if (first_error.empty())
            first_error = dlerror();
    }
    if (!handle)
        throw DeviceError("cannot load cuBLAS (" + library_name()
            + "), which GPU workers need: install the CUDA 13 libraries, add their folder to LD_LIBRARY_PATH, or "
              "name the file in FULCRUM_CUBLAS (pip's nvidia-cublas puts it in site-packages/nvidia/cu13/lib) ("
            + first_error + ")");
    CublasLibrary lib;
    resolve(handle, "cublasCreate_v2", lib.create);
    resolve(handle, "cublasDestroy_v2", lib.destroy);
    resolve(handle, "cublasSetStream_v2", lib.set_stream);
    resolve(handle, "cublasSetMathMode", lib.set_math_mode);
    resolve(handle, "cublasSgemm_v2", lib.sgemm);
    resolve(handle, "cublasSetWorkspace_v2", lib.set_workspace);
    resolve(handle, "cublasGetStatusString", lib.status_string);
    return lib; // the handle stays open for the process's life
}

} // namespace

const CublasLibrary& cublas()
{
    static std::once_flag once;
    static CublasLibrary lib;
    std::call_once(once, [] { lib = open_cublas(); });
    return lib;
}

std::string cublas_status_text(cublasStatus_t status)
{
    return cublas().status_string ? cublas().status_string(status) : "status " + std::to_string(int(status));
}

} // namespace fulcrum::gpu
