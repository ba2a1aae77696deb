#include "predict/predictor_registry.h"

#include "common/random.h"
#include "predict/arima_predictor.h"
#include "predict/memoryless_predictor.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fulcrum::predict {

const std::vector<std::string>& predictor_names()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const CatalogueEntry& p : predictor_catalogue())
            out.push_back(p.name);
        return out;
    }();
    return names;
}

std::vector<CatalogueEntry> predictor_catalogue()
{
    return {
        { "memoryless", "the last measured speed" },
        { "ema", "an exponential moving average of the measured speeds" },
        { "arima", "ARIMA(2,2,1) fitted to the recent speeds" },
        { "narx", "a NARX network over past speeds and CPU and memory shares (LB-BSP's)" },
    };
}

NarxNetwork load_narx_model(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::invalid_argument(path + ": cannot open the NARX model file");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return NarxNetwork::deserialize(text.str());
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(path + ": " + e.what());
    }
}

std::unique_ptr<SpeedPredictor> make_predictor(const PredictorSpec& spec, int worker)
{
    if (spec.type == "memoryless")
        return std::make_unique<MemorylessPredictor>();
    if (spec.type == "ema")
        return std::make_unique<EmaPredictor>(spec.ema_alpha);
    if (spec.type == "arima")
        return std::make_unique<ArimaPredictor>();
    if (spec.type == "narx") {
        NarxOptions options = spec.narx;
        options.ema_alpha = spec.ema_alpha;
        options.seed = splitmix64(spec.narx.seed + static_cast<std::uint64_t>(worker));
        return std::make_unique<NarxPredictor>(options);
    }
    throw std::invalid_argument(
        "unknown speed predictor '" + spec.type + "' (expected memoryless, ema, arima or narx)");
}

} // namespace fulcrum::predict
