#include "balance/federated_tuning.h"

#include "balance/rounding.h"

#include <algorithm>
#include <stdexcept>

namespace fulcrum::balance {

const std::vector<std::string>& federated_variant_names()
{
    static const std::vector<std::string> names { "fedavg", "tune-batch", "tune-steps", "scale-lr" };
    return names;
}

FederatedVariant parse_federated_variant(const std::string& name)
{
    if (name == "fedavg")
        return FederatedVariant::FedAvg;
    if (name == "tune-batch")
        return FederatedVariant::TuneBatch;
    if (name == "tune-steps")
        return FederatedVariant::TuneSteps;
    if (name == "scale-lr")
        return FederatedVariant::ScaleLearningRate;
    throw std::invalid_argument(
        "unknown federated variant '" + name + "' (expected fedavg, tune-batch, tune-steps or scale-lr)");
}

FederatedTuner::FederatedTuner(FederatedVariant variant, int clients, std::int32_t batch_size, int local_steps,
    double learning_rate, double ema_alpha)
    : variant_(variant)
    , batch_size_(batch_size)
    , local_steps_(local_steps)
    , learning_rate_(learning_rate)
    , speeds_(static_cast<std::size_t>(clients), predict::EmaPredictor(ema_alpha))
    , seen_(static_cast<std::size_t>(clients), false)
{
    if (clients < 1 || batch_size < 1 || local_steps < 1 || !(learning_rate > 0))
        throw std::invalid_argument("federated tuning needs clients, a batch, local steps and a learning rate");
}

void FederatedTuner::observe(int client, std::int64_t samples, double compute_s)
{
    if (compute_s <= 0 || samples <= 0)
        return;
    speeds_.at(static_cast<std::size_t>(client)).observe({ static_cast<double>(samples) / compute_s, 1, 1 });
    seen_[static_cast<std::size_t>(client)] = true;
}

std::vector<ClientPlan> FederatedTuner::plan() const
{
    const std::size_t n = speeds_.size();
    std::vector<ClientPlan> plans(n, ClientPlan { batch_size_, local_steps_, learning_rate_ });
    const bool known = std::all_of(seen_.begin(), seen_.end(), [](bool b) { return b; });
    if (variant_ == FederatedVariant::FedAvg || !known)
        return plans;
    std::vector<double> speed;
    for (const auto& s : speeds_)
        speed.push_back(s.value());
    if (variant_ == FederatedVariant::TuneSteps) {
        // Fast clients take more local steps; the total number of steps per round is kept.
        const auto steps = proportional_split(speed, static_cast<std::int32_t>(local_steps_ * static_cast<int>(n)));
        for (std::size_t i = 0; i < n; ++i)
            plans[i].local_steps = steps[i];
        return plans;
    }
    // Batch sizes proportional to speed (Alg. 1's rule), the total per step kept.
    const auto sizes = proportional_split(speed, static_cast<std::int32_t>(batch_size_ * static_cast<std::int32_t>(n)));
    for (std::size_t i = 0; i < n; ++i) {
        plans[i].batch_size = sizes[i];
        if (variant_ == FederatedVariant::ScaleLearningRate)
            plans[i].learning_rate = learning_rate_ * sizes[i] / batch_size_;
    }
    return plans;
}

} // namespace fulcrum::balance
