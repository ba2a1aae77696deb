#pragma once

#include "sched/ps_job.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fulcrum::sched {

// When a parameter-server job has given its user early feedback (EPS): from then on the
// scheduler may take slots from it for a newcomer. The point is configurable as a fraction
// of the job's samples, a number of iterations at the job's requested size, or a test
// accuracy reached on the job's modelled learning curve.
struct EarlyFeedback {
    enum class Kind { Fraction, Iterations, Accuracy };
    Kind kind = Kind::Fraction;
    double value = 0.1;

    // Samples the job must process to reach the point; +infinity when it never does
    // (an accuracy above what its model reaches, iterations beyond its end).
    double samples_needed(const PsJobSpec& job) const;
};

// A live job's early-feedback point (fulcrumd's elastic scheduling), from what its trainer
// reports: the fraction of its planned iterations done, the iterations done, or its latest
// test accuracy (a real evaluation, not the modelled curve).
bool live_feedback_reached(
    const EarlyFeedback& feedback, std::int64_t done, std::int64_t planned, std::optional<double> accuracy);

// "fraction:F" (0 < F <= 1), "iterations:N" (N >= 1) or "accuracy:A" (0 < A < 1).
// Throws std::invalid_argument saying what was expected.
EarlyFeedback parse_early_feedback(std::string_view text);
std::string to_string(const EarlyFeedback& feedback);

// The modelled learning curve behind `accuracy:A`. A job's test accuracy after a fraction p
// of its samples rises as a saturating exponential, acc(p) = A_final (1 - e^{-p/tau}) /
// (1 - e^{-1/tau}) with tau = 0.25, reaching the model's final accuracy at p = 1. A_final is
// the template's published top-1 accuracy (ImageNet for the CNNs, next-word accuracy for the
// PTB LSTM). The shape is an assumption (the usual diminishing returns of SGD), not a fit.
double final_accuracy(const ModelTemplate& model);
double modelled_accuracy(const ModelTemplate& model, double progress);
// The smallest progress p with modelled_accuracy(p) >= accuracy, or nothing when never.
std::optional<double> progress_for_accuracy(const ModelTemplate& model, double accuracy);

} // namespace fulcrum::sched
