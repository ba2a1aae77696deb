#include "balance/narx_model_files.h"

#include "balance/batch_size_manager.h"
#include "balance/lbbsp_cpu_policy.h"

#include <fstream>
#include <stdexcept>

namespace fulcrum::balance {

std::vector<std::string> save_narx_models(BatchSizeManager& manager, const std::filesystem::path& dir)
{
    std::vector<std::string> written;
    auto* policy = dynamic_cast<LbBspCpuPolicy*>(&manager.policy());
    if (!policy)
        return written;
    for (int worker = 0; worker < manager.workers(); ++worker) {
        const auto* narx = dynamic_cast<const predict::NarxPredictor*>(policy->predictor(worker));
        if (!narx || !narx->has_model())
            continue;
        const auto path = dir / ("worker-" + std::to_string(worker) + ".narx");
        std::ofstream out(path);
        out << narx->model()->serialize();
        out.close();
        if (!out)
            throw std::runtime_error("cannot write NARX model '" + path.string() + "'");
        written.push_back(path.string());
    }
    return written;
}

} // namespace fulcrum::balance
