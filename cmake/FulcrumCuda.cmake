# The CUDA path of GPU workers: FULCRUM_CUDA=AUTO builds it where nvcc is found, ON requires
# it, OFF leaves it out. Everything else builds either way; without it, a worker whose
# profile names a "cuda:N" device is refused at submission with the reason.
set(FULCRUM_CUDA "AUTO" CACHE STRING "CUDA GPU workers: AUTO (where nvcc is found), ON (required) or OFF")
set_property(CACHE FULCRUM_CUDA PROPERTY STRINGS AUTO ON OFF)
set(FULCRUM_CUDA_ARCHITECTURES "90" CACHE STRING
    "CUDA architectures to compile for (90: H100 and H200, with PTX for newer GPUs)")

set(FULCRUM_HAVE_CUDA OFF)
if(NOT FULCRUM_CUDA STREQUAL "OFF")
  # Debian has no CUDA 13 package; NVIDIA's installer puts the toolkit in /usr/local/cuda,
  # which is not on PATH by default.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${FULCRUM_CUDA_ARCHITECTURES})
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit 12.4 REQUIRED)
    set(CMAKE_CUDA_STANDARD 17) # CMake 3.25 knows no C++20 flag for nvcc; the .cu files need only 17
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    if(CCACHE_PROGRAM AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
    endif()
    set(FULCRUM_HAVE_CUDA ON)
  elseif(FULCRUM_CUDA STREQUAL "ON")
    message(FATAL_ERROR "FULCRUM_CUDA=ON but no CUDA compiler was found: install the CUDA Toolkit "
                        "(nvcc in /usr/local/cuda/bin) or configure with -DFULCRUM_CUDA=AUTO")
  else()
    message(STATUS "No CUDA compiler found: GPU workers are not built (FULCRUM_CUDA=AUTO)")
  endif()
endif()
add_feature_info(cuda FULCRUM_HAVE_CUDA
                 "CUDA GPU workers (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, sm ${CMAKE_CUDA_ARCHITECTURES}; cuBLAS loaded at run time)")
