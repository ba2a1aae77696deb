#pragma once

#include <cstdint>
#include <random>

namespace fulcrum {

// Independent, reproducible random streams derived from one scenario seed. Each consumer
// (a worker's sampler, a worker's noise, model initialisation) names its stream, so adding
// a consumer never shifts the numbers another one sees.
enum class Stream : std::uint64_t {
    ModelInit = 1,
    Sampling = 2,
    Noise = 3,
    Resources = 4,
    Data = 5,
};

constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

constexpr std::uint64_t derive_seed(std::uint64_t seed, Stream stream, std::uint64_t index = 0) noexcept
{
    return splitmix64(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(stream))) + index);
}

// std::mt19937_64 is specified bit for bit by the standard, so streams are identical on every
// platform. Distributions are not, which is why the helpers below avoid std:: distributions.
using Rng = std::mt19937_64;

inline Rng make_rng(std::uint64_t seed, Stream stream, std::uint64_t index = 0)
{
    return Rng(derive_seed(seed, stream, index));
}

// Uniform double in [0, 1) from the top 53 bits.
inline double uniform01(Rng& rng)
{
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Uniform integer in [0, n) without modulo bias worth noticing for n << 2^64.
inline std::uint64_t uniform_index(Rng& rng, std::uint64_t n)
{
    return static_cast<std::uint64_t>(uniform01(rng) * static_cast<double>(n));
}

double standard_normal(Rng& rng);

} // namespace fulcrum
