#include "common/random.h"

#include <cmath>
#include <numbers>

namespace fulcrum {

// Box-Muller from our own uniforms: std::normal_distribution differs between standard libraries.
double standard_normal(Rng& rng)
{
    double u1 = uniform01(rng);
    const double u2 = uniform01(rng);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

} // namespace fulcrum
