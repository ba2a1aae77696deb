#include "predict/predictor_registry.h"

#include "common/json_fields.h"
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
        { "memoryless", "the last measured speed", {}, {} },
        { "ema", "an exponential moving average of the measured speeds", {}, {} },
        { "arima", "ARIMA(2,2,1) fitted to the recent speeds", {}, {} },
        { "narx", "a NARX network over past speeds and CPU and memory shares (LB-BSP's)", {}, {} },
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

void parse_predictor_spec(const JsonFields& q, PredictorSpec& spec)
{
    spec.type = q.string_or("type", spec.type, predictor_names());
    spec.ema_alpha = q.number_or("ema_alpha", spec.ema_alpha, 1e-6, 1.0);
    NarxOptions& narx = spec.narx;
    narx.shape.speed_lags = static_cast<int>(q.integer_or("speed_lags", narx.shape.speed_lags, 1, 64));
    narx.shape.resource_lags = static_cast<int>(q.integer_or("resource_lags", narx.shape.resource_lags, 0, 64));
    narx.shape.hidden = static_cast<int>(q.integer_or("hidden", narx.shape.hidden, 1, 1024));
    narx.min_samples = static_cast<int>(q.integer_or("min_samples", narx.min_samples, 8, 10'000'000));
    narx.retrain_every = static_cast<int>(q.integer_or("retrain_every", narx.retrain_every, 1, 10'000'000));
    narx.history = static_cast<int>(q.integer_or("history", narx.history, 16, 10'000'000));
    narx.training.max_epochs = static_cast<int>(q.integer_or("max_epochs", narx.training.max_epochs, 1, 1'000'000));
    narx.training.patience = static_cast<int>(q.integer_or("patience", narx.training.patience, 1, 1'000'000));
    spec.warm_start = q.string_or("warm_start", spec.warm_start, { "none", "peer", "pooled", "file" });
    if ((spec.warm_start == "file") != q.has("warm_start_file"))
        q.fail(q.at("warm_start_file"), "is required with warm_start \"file\" and only then");
    spec.warm_start_file = q.has("warm_start_file") ? q.server_path("warm_start_file", FolderKind::Models) : "";
    q.reject_unknown();
}

} // namespace fulcrum::predict
