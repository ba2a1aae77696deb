#include "gpu/cublas_library.h"
#include "gpu/device_error.h"

#include <dlfcn.h>
#include <mutex>

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
    // The toolkit's own folder first: NVIDIA's installer does not add it to ld.so's path.
    void* handle = nullptr;
    for (const std::string& candidate : { library_name(), "/usr/local/cuda/lib64/" + library_name() })
        if ((handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)))
            break;
    if (!handle)
        throw DeviceError("cannot load cuBLAS (" + library_name()
            + "), which GPU workers need: install the CUDA 13 libraries or add their folder to LD_LIBRARY_PATH ("
            + dlerror() + ")");
    CublasLibrary lib;
    resolve(handle, "cublasCreate_v2", lib.create);
    resolve(handle, "cublasDestroy_v2", lib.destroy);
    resolve(handle, "cublasSetStream_v2", lib.set_stream);
    resolve(handle, "cublasSetMathMode", lib.set_math_mode);
    resolve(handle, "cublasSgemm_v2", lib.sgemm);
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
