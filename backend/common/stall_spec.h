#pragma once

// Issue 42's stall detection as a job's scenario sets it ("on_stall"): a worker whose batch
// has run more than `factor` times the time its batch-size policy predicted, and at least
// `min_s`, is stalled. The trainer records a worker-stalled event then and worker-recovered
// when the batch ends; with the exclude action, the job's own policy also excludes it.

#include "common/named_values.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fulcrum {

enum class StallAction : std::uint8_t {
    Report, // the events only
    Exclude, // and an exclusion by the policy ("policy: on_stall"), for `for_s`
};

inline constexpr NameTable<StallAction, 2> kStallActions { {
    { StallAction::Report, "report" },
    { StallAction::Exclude, "exclude" },
} };

inline std::string_view to_string(StallAction action)
{
    return name_of(kStallActions, action);
}

struct StallSpec {
    double factor = 5; // k: times the predicted batch time
    double min_s = 2; // never sooner than this
    StallAction action = StallAction::Report;
    double after_s = 0; // exclude: this long after the stall is reported, if the batch has not ended
    double for_s = 60; // exclude: the exclusion's limit, after which the worker is measured again

    // How long a batch predicted to take `predicted_s` may run before it is a stall.
    double threshold_s(double predicted_s) const { return std::max(factor * predicted_s, min_s); }
};

} // namespace fulcrum
