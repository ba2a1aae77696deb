option(FULCRUM_BUILD_TESTS "Build the GoogleTest suite" ON)
option(FULCRUM_BUILD_BENCH "Build the benchmarks in bench/" ON)
option(FULCRUM_BUILD_UI "Build the Qt 6 console" ON)
set(FULCRUM_ARCH "native" CACHE STRING
    "Target CPU for -march: native (this machine, fastest), a level such as x86-64-v2 or x86-64-v4, or empty for the compiler's default (packages)")
option(FULCRUM_WERROR "Treat warnings as errors" OFF)
option(FULCRUM_STATIC_DEPS "Link Boost, SQLite, zlib, OpenSSL and libstdc++ statically (programs for machines without Debian's libraries)" OFF)
if(FULCRUM_STATIC_DEPS)
  # Before any find_package: each finder then picks the .a (SQLite3's is named in the top
  # CMakeLists.txt). glibc stays shared, since cuBLAS and the NVIDIA driver are opened with dlopen.
  set(Boost_USE_STATIC_LIBS ON)
  set(ZLIB_USE_STATIC_LIBS ON)
  set(OPENSSL_USE_STATIC_LIBS ON)
  add_link_options($<$<LINK_LANGUAGE:CXX>:-static-libstdc++> -static-libgcc)
endif()
add_feature_info(static-deps FULCRUM_STATIC_DEPS "Boost, SQLite, zlib, OpenSSL and libstdc++ linked statically")
add_feature_info(tests FULCRUM_BUILD_TESTS "GoogleTest suite (ctest)")
add_feature_info(bench FULCRUM_BUILD_BENCH "benchmarks in bench/")
add_feature_info(console FULCRUM_BUILD_UI "Qt 6 console")
if(FULCRUM_ARCH)
  add_feature_info(arch ON "-march=${FULCRUM_ARCH} for the model math")
else()
  add_feature_info(arch OFF "-march: the compiler's default target (portable)")
endif()

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
endif()

# For every target alike: Eigen's alignment (EIGEN_MAX_ALIGN_BYTES) follows the instruction
# set, so a library built with AVX and a program built without disagree on how Eigen objects
# are allocated and freed across the boundary.
if(FULCRUM_ARCH)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=${FULCRUM_ARCH}>)
endif()
