#include "sched/early_feedback.h"

#include "common/named_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace fulcrum::sched {

namespace {

constexpr double kTau = 0.25;

double parse_number(std::string_view text, std::string_view what)
{
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc {} || ptr != end || !std::isfinite(value))
        throw std::invalid_argument(
            "expected a number after '" + std::string(what) + ":', got '" + std::string(text) + "'");
    return value;
}

} // namespace

double final_accuracy(const ModelTemplate& model)
{
    // Published top-1 accuracies of the Table III models (torchvision's ImageNet figures;
    // Zaremba et al.'s medium PTB LSTM, perplexity 82, about 0.28 next-word accuracy).
    if (model.name == "vgg16")
        return 0.716;
    if (model.name == "resnet50")
        return 0.761;
    if (model.name == "inception-v3")
        return 0.773;
    if (model.name == "lstm-ptb")
        return 0.28;
    throw std::invalid_argument("no final accuracy is known for model '" + model.name + "'");
}

double modelled_accuracy(const ModelTemplate& model, double progress)
{
    const double p = std::clamp(progress, 0.0, 1.0);
    return final_accuracy(model) * (1 - std::exp(-p / kTau)) / (1 - std::exp(-1 / kTau));
}

std::optional<double> progress_for_accuracy(const ModelTemplate& model, double accuracy)
{
    const double a = accuracy / final_accuracy(model);
    if (a > 1)
        return std::nullopt;
    if (a <= 0)
        return 0.0;
    // Invert the curve; clamp against rounding at a = 1.
    return std::min(1.0, -kTau * std::log(1 - a * (1 - std::exp(-1 / kTau))));
}

bool live_feedback_reached(
    const EarlyFeedback& feedback, std::int64_t done, std::int64_t planned, std::optional<double> accuracy)
{
    switch (feedback.kind) {
    case EarlyFeedback::Kind::Fraction:
        return planned > 0 && static_cast<double>(done) >= feedback.value * static_cast<double>(planned);
    case EarlyFeedback::Kind::Iterations:
        return static_cast<double>(done) >= feedback.value;
    case EarlyFeedback::Kind::Accuracy:
        return accuracy && *accuracy >= feedback.value;
    }
    return false;
}

double EarlyFeedback::samples_needed(const PsJobSpec& job) const
{
    constexpr double kNever = std::numeric_limits<double>::infinity();
    switch (kind) {
    case Kind::Fraction:
        return value * job.samples();
    case Kind::Iterations: {
        const double samples = value * job.workers * job.model.batch_size;
        if (samples <= job.samples())
            return samples;
        return kNever;
    }
    case Kind::Accuracy: {
        const auto p = progress_for_accuracy(job.model, value);
        return p ? *p * job.samples() : kNever;
    }
    }
    return kNever;
}

namespace {

constexpr NameTable<EarlyFeedback::Kind, 3> kKinds { {
    { EarlyFeedback::Kind::Fraction, "fraction" },
    { EarlyFeedback::Kind::Iterations, "iterations" },
    { EarlyFeedback::Kind::Accuracy, "accuracy" },
} };

} // namespace

EarlyFeedback parse_early_feedback(std::string_view text)
{
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
        throw std::invalid_argument("expected fraction:F, iterations:N or accuracy:A, got '" + std::string(text) + "'");
    const std::string_view kind = text.substr(0, colon);
    const double value = parse_number(text.substr(colon + 1), kind);
    const std::optional<EarlyFeedback::Kind> named = value_named(kKinds, kind);
    if (!named)
        throw std::invalid_argument(
            "expected fraction, iterations or accuracy before ':', got '" + std::string(kind) + "'");
    EarlyFeedback f;
    f.kind = *named;
    f.value = value;
    const std::string given(text.substr(colon + 1));
    switch (f.kind) {
    case EarlyFeedback::Kind::Fraction:
        if (!(value > 0 && value <= 1))
            throw std::invalid_argument("fraction:F: expected F in (0, 1], got " + given);
        break;
    case EarlyFeedback::Kind::Iterations:
        if (!(value >= 1) || value != std::floor(value))
            throw std::invalid_argument("iterations:N: expected a whole N >= 1, got " + given);
        break;
    case EarlyFeedback::Kind::Accuracy:
        if (!(value > 0 && value < 1))
            throw std::invalid_argument("accuracy:A: expected A in (0, 1), got " + given);
        break;
    }
    return f;
}

std::string to_string(const EarlyFeedback& feedback)
{
    char buffer[64];
    const std::string kind(name_of(kKinds, feedback.kind));
    std::snprintf(buffer, sizeof buffer, "%s:%g", kind.c_str(), feedback.value);
    return buffer;
}

} // namespace fulcrum::sched
