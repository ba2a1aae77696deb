#pragma once
// Eigen's Core for every module that does model math. Include this instead of <Eigen/Core>.
//
// GCC 12 warns inside its own AVX-512 intrinsics (`__m512 __Y = __Y;` in avx512fintrin.h,
// the "undefined" merge source of a masked builtin) once Eigen's AVX-512 kernels are inlined
// into our code: -Wuninitialized / -Wmaybe-uninitialized, fatal under -Werror. It is GCC bug
// 105593, fixed in GCC 13. GCC checks diagnostic pragmas at the warning's own location, so
// including <immintrin.h> first, between push and pop, silences exactly those headers for
// exactly those compilers and targets; the warnings stay on for every line of ours.
// (Modules that include this header link Eigen3::Eigen themselves.)
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13 && defined(__AVX512F__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <Eigen/Core>
