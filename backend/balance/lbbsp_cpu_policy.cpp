#include "balance/lbbsp_cpu_policy.h"

#include "balance/rounding.h"
#include "balance/uniform_policy.h"
#include "predict/narx_predictor.h"

#include <algorithm>

namespace fulcrum::balance {

std::vector<std::int32_t> balanced_sizes(const std::vector<double>& speeds, const std::vector<double>& comm_s,
                                         std::int32_t total_batch)
{
    double speed_sum = 0, weighted_comm = 0;
    for (std::size_t i = 0; i < speeds.size(); ++i) {
        speed_sum += speeds[i];
        weighted_comm += speeds[i] * comm_s[i];
    }
    if (!(speed_sum > 0))
        return proportional_split(std::vector<double>(speeds.size(), 1.0), total_batch);
    const double target = (total_batch + weighted_comm) / speed_sum;
    std::vector<double> weights(speeds.size());
    for (std::size_t i = 0; i < speeds.size(); ++i)
        weights[i] = std::max(0.0, speeds[i] * (target - comm_s[i]));
    return proportional_split(weights, total_batch);
}

LbBspCpuPolicy::LbBspCpuPolicy(predict::PredictorSpec predictor)
    : spec_(std::move(predictor))
    , decision_("lbbsp-cpu/" + spec_.type)
{
    predict::make_predictor(spec_, 0); // fail now on an unknown predictor
}

predict::SpeedPredictor& LbBspCpuPolicy::predictor_for(WorkerId worker)
{
    auto& slot = predictors_[worker];
    if (!slot)
        slot = predict::make_predictor(spec_, worker);
    return *slot;
}

predict::SpeedPredictor* LbBspCpuPolicy::predictor(WorkerId worker)
{
    const auto it = predictors_.find(worker);
    return it == predictors_.end() ? nullptr : it->second.get();
}

Allocation LbBspCpuPolicy::initial(int workers, std::int32_t total_batch)
{
    // Nothing is known before the first barrier: start uniform (the paper does the same).
    Allocation a = UniformPolicy().initial(workers, total_batch);
    a.decision = decision_;
    return a;
}

Allocation LbBspCpuPolicy::next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch)
{
    Allocation a;
    a.decision = decision_;
    std::vector<double> speeds(observations.size()), comm(observations.size());
    for (std::size_t i = 0; i < observations.size(); ++i) {
        const WorkerObservation& o = observations[i];
        predict::SpeedPredictor& p = predictor_for(o.worker);
        const auto started = started_with_.find(o.worker);
        const predict::ResourceState at_start = started != started_with_.end()
            ? started->second
            : predict::ResourceState { o.cpu_share, o.memory_share };
        if (o.compute_s > 0 && o.batch_size > 0)
            p.observe({ o.batch_size / o.compute_s, at_start.cpu, at_start.memory });
        const predict::ResourceState now { o.next_cpu_share, o.next_memory_share };
        started_with_[o.worker] = now;
        speeds[i] = std::max(1e-9, p.predict(now));
        comm[i] = o.comm_s;
        a.predicted_speeds.emplace_back(speeds[i]);
    }
    a.batch_sizes = balanced_sizes(speeds, comm, total_batch);
    return a;
}

} // namespace fulcrum::balance
