#include "experiment/experiment.h"

#include "common/error.h"

#include <stdexcept>
#include <system_error>

namespace fulcrum::experiment {

namespace {

struct Entry {
    const char* name;
    const char* what;
    void (*run)(const ExperimentOptions&);
};

const std::vector<Entry>& entries()
{
    static const std::vector<Entry> list {
        { "equilibrium",
            "LB-BSP Fig. 8: 4 GPU classes reach an equilibrium with Alg. 2; bandwidth cut at iteration 150",
            run_equilibrium },
        { "straggler-extents",
            "LB-BSP Fig. 12: 32 CPU workers at homo/hetero-l2/hetero-l3, six sync schemes, time to accuracy",
            run_straggler_extents },
        { "predictors", "LB-BSP Table 3: RMSE of memoryless, EMA, ARIMA, NARX and the iteration time each gives",
            run_predictors },
        { "federated", "LB-BSP Fig. 13: FedAvg vs tune-B (LB-BSP) vs tune-tau vs scale-eta, 5 non-i.i.d. clients",
            run_federated },
        { "aggregation", "weighted vs naive gradient aggregation under LB-BSP, accuracy after fixed epochs",
            run_aggregation },
        { "zipline", "ElasticBSP Table II: cost of GridScan, FullGridScan, ZipLine and the exact heap algorithm",
            run_zipline_cost },
        { "gpu-profile", "a device's GPU performance model (Γ(0), x_s, peak, memory) measured: --device cpu|cuda:N",
            run_gpu_profile },
    };
    return list;
}

} // namespace

const std::vector<std::string>& experiment_names()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& e : entries())
            n.emplace_back(e.name);
        return n;
    }();
    return names;
}

std::string describe_experiments()
{
    std::string text;
    for (const auto& e : entries())
        text += "  " + std::string(e.name)
            + std::string(20 - std::min<std::size_t>(19, std::string(e.name).size()), ' ') + e.what + "\n";
    return text;
}

void run_experiment(const std::string& name, const ExperimentOptions& options)
{
    for (const auto& e : entries())
        if (name == e.name) {
            std::error_code ec;
            std::filesystem::create_directories(options.out, ec);
            if (ec)
                throw InputError(options.out.string(), "--out", "cannot create the output folder: " + ec.message());
            e.run(options);
            return;
        }
    throw std::invalid_argument("unknown experiment '" + name + "'");
}

} // namespace fulcrum::experiment
