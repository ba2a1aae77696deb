#include "predict/predictor_registry.h"

#include "common/error.h"
#include "common/file_text.h"
#include "common/json_fields.h"
#include "common/random.h"
#include "common/registry.h"
#include "predict/arima_predictor.h"
#include "predict/memoryless_predictor.h"

#include <stdexcept>

namespace fulcrum::predict {

namespace {

struct PredictorEntry {
    KindInfo kind;
    bool trains_network;
    std::unique_ptr<SpeedPredictor> (*make)(const PredictorSpec& spec, int worker);
};

constexpr PredictorEntry kPredictors[] = {
    { { "memoryless", "the last measured speed" }, false,
        [](const PredictorSpec&, int) -> std::unique_ptr<SpeedPredictor> {
            return std::make_unique<MemorylessPredictor>();
        } },
    { { "ema", "an exponential moving average of the measured speeds" }, false,
        [](const PredictorSpec& spec, int) -> std::unique_ptr<SpeedPredictor> {
            return std::make_unique<EmaPredictor>(spec.ema_alpha);
        } },
    { { "arima", "ARIMA(2,2,1) fitted to the recent speeds" }, false,
        [](const PredictorSpec&, int) -> std::unique_ptr<SpeedPredictor> {
            return std::make_unique<ArimaPredictor>();
        } },
    { { "narx", "a NARX network over past speeds and CPU and memory shares (LB-BSP's)" }, true,
        [](const PredictorSpec& spec, int worker) -> std::unique_ptr<SpeedPredictor> {
            NarxOptions options = spec.narx;
            options.ema_alpha = spec.ema_alpha;
            options.seed = splitmix64(spec.narx.seed + static_cast<std::uint64_t>(worker));
            return std::make_unique<NarxPredictor>(options);
        } },
};

constexpr Registry<PredictorEntry> kRegistry { "speed predictor", kPredictors };

constexpr NameTable<WarmStart, 4> kWarmStarts { {
    { WarmStart::None, "none" },
    { WarmStart::Peer, "peer" },
    { WarmStart::Pooled, "pooled" },
    { WarmStart::File, "file" },
} };

} // namespace

std::string_view to_string(WarmStart w)
{
    return name_of(kWarmStarts, w);
}

std::vector<std::string> predictor_names()
{
    return kRegistry.names();
}

std::vector<CatalogueEntry> predictor_catalogue()
{
    return kRegistry.catalogue();
}

NarxNetwork load_narx_model(const std::string& path)
{
    // A file in fulcrumd's models folders, read on the core's thread at a set-policy: a FIFO
    // there must not hang it, nor a link to an endless device fill its memory.
    std::string text;
    try {
        text = read_file_text(path, kMaxStateFileBytes);
    } catch (const InputError& e) {
        throw std::invalid_argument(path + ": cannot open the NARX model file (" + e.reason() + ")");
    }
    try {
        return NarxNetwork::deserialize(text);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(path + ": " + e.what());
    }
}

std::unique_ptr<SpeedPredictor> make_predictor(const PredictorSpec& spec, int worker)
{
    return kRegistry.entry(spec.type).make(spec, worker);
}

bool trains_network(const PredictorSpec& spec)
{
    return kRegistry.entry(spec.type).trains_network;
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
    std::vector<std::string> warm_starts;
    for (const auto& [w, name] : kWarmStarts)
        warm_starts.emplace_back(name);
    spec.warm_start
        = *value_named(kWarmStarts, q.string_or("warm_start", std::string(to_string(spec.warm_start)), warm_starts));
    if ((spec.warm_start == WarmStart::File) != q.has("warm_start_file"))
        q.fail(q.at("warm_start_file"), "is required with warm_start \"file\" and only then");
    spec.warm_start_file = q.has("warm_start_file") ? q.server_path("warm_start_file", FolderKind::Models) : "";
    q.reject_unknown();
}

} // namespace fulcrum::predict
