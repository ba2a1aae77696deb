#include "sched/model_templates.h"

#include "common/error.h"
#include "sched/csv_fields.h"

#include <iomanip>
#include <sstream>

namespace fulcrum::sched {

namespace {

constexpr const char* kHeader = "model,size_mb,forward_ms,backward_ms,batch,memory_mb";
constexpr double kBytesPerMb = 1e6;
constexpr double kMibPerGb = 1024; // GPU memory: Table III's MB against a GPU's 32768 MB

ModelTemplate from_table(
    const std::string& name, double size_mb, double forward_ms, double backward_ms, int batch, double memory_mb)
{
    return { name, size_mb * kBytesPerMb, memory_mb / kMibPerGb, batch, forward_ms / 1000, backward_ms / 1000 };
}

} // namespace

ModelCatalogue ModelCatalogue::table3()
{
    // Wang et al. Table III, one V100; the authors' simulator's TEMPLATES (lstm is PTB).
    return ModelCatalogue({
        from_table("vgg16", 526.4, 36, 54, 16, 4527),
        from_table("resnet50", 99.2, 25, 37, 16, 3213),
        from_table("inception-v3", 103.0, 35, 52, 16, 3291),
        from_table("lstm-ptb", 251.8, 32, 47, 64, 2751),
    });
}

ModelCatalogue ModelCatalogue::estimates()
{
    // Sizes are fp32 parameter counts; times and memory our estimates from public V100
    // throughputs at these batch sizes, backward taken as twice the forward.
    return ModelCatalogue({
        { "vgg16", 4.0 * 138.36e6, 6.5, 32, 0.046, 0.093 },
        { "resnet50", 4.0 * 25.56e6, 5.2, 32, 0.030, 0.059 },
        { "inception-v3", 4.0 * 23.83e6, 5.8, 32, 0.044, 0.089 },
        { "lstm-ptb", 4.0 * 66.0e6, 2.4, 20, 0.020, 0.040 },
    });
}

ModelCatalogue ModelCatalogue::load(const std::string& path)
{
    std::vector<ModelTemplate> models;
    csv::for_each_row(
        path, kHeader,
        [&](const std::vector<std::string>& cells, const std::string& where) {
            if (cells[0].empty())
                throw InputError(where, "model", "expected a model name, got an empty cell");
            for (const ModelTemplate& m : models)
                if (m.name == cells[0])
                    throw InputError(where, "model", "'" + cells[0] + "' is defined twice");
            const auto positive_number = [&](const std::string& cell, const char* field, const char* unit) {
                const double x = csv::number<double>(cell, where, field, unit);
                if (!(x > 0) || !std::isfinite(x))
                    throw InputError(where, field, std::string("expected ") + unit + ", got " + cell);
                return x;
            };
            models.push_back(from_table(cells[0], positive_number(cells[1], "size_mb", "megabytes > 0"),
                positive_number(cells[2], "forward_ms", "milliseconds > 0"),
                positive_number(cells[3], "backward_ms", "milliseconds > 0"),
                csv::positive<int>(cells[4], where, "batch"),
                positive_number(cells[5], "memory_mb", "megabytes of GPU memory > 0")));
        },
        "model");
    return ModelCatalogue(std::move(models));
}

ModelCatalogue ModelCatalogue::named_or_file(const std::string& spec)
{
    if (spec == "table3")
        return table3();
    if (spec == "estimates")
        return estimates();
    return load(spec);
}

std::optional<ModelTemplate> ModelCatalogue::find(const std::string& name) const
{
    for (const ModelTemplate& t : models_)
        if (t.name == name)
            return t;
    return std::nullopt;
}

std::string ModelCatalogue::names() const
{
    std::string out;
    for (const ModelTemplate& t : models_)
        out += (out.empty() ? "" : ", ") + t.name;
    return out;
}

std::string ModelCatalogue::csv() const
{
    std::ostringstream out;
    out << kHeader << '\n' << std::setprecision(10);
    for (const ModelTemplate& t : models_)
        out << t.name << ',' << t.model_bytes / kBytesPerMb << ',' << t.forward_s * 1000 << ',' << t.backward_s * 1000
            << ',' << t.batch_size << ',' << t.memory_gb * kMibPerGb << '\n';
    return out.str();
}

const std::vector<ModelTemplate>& model_templates()
{
    static const ModelCatalogue defaults = ModelCatalogue::table3();
    return defaults.models();
}

std::optional<ModelTemplate> find_model_template(const std::string& name)
{
    for (const ModelTemplate& t : model_templates())
        if (t.name == name)
            return t;
    return std::nullopt;
}

} // namespace fulcrum::sched
