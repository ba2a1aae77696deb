#include "perf/cluster_profiles.h"

namespace fulcrum::perf {

const std::vector<InstanceType>& cluster_b_instances()
{
    // c5 cores are about 1.4x a Broadwell m4 core on dense math; r4 matches m4 per core.
    static const std::vector<InstanceType> types {
        { "m4.2xlarge", 1.0, 17 },
        { "c5.2xlarge", 1.4, 10 },
        { "r4.2xlarge", 1.0, 2 },
        { "m4.4xlarge", 2.0, 2 },
        { "m4.xlarge", 0.5, 1 },
    };
    return types;
}

std::optional<double> instance_speed_factor(const std::string& name)
{
    for (const auto& type : cluster_b_instances())
        if (type.name == name)
            return type.relative_speed;
    return std::nullopt;
}

const char* to_string(Heterogeneity level)
{
    switch (level) {
    case Heterogeneity::Homo:
        return "homo";
    case Heterogeneity::HeteroL2:
        return "hetero-l2";
    case Heterogeneity::HeteroL3:
        return "hetero-l3";
    }
    return "homo";
}

std::optional<Heterogeneity> parse_heterogeneity(const std::string& text)
{
    if (text == "homo")
        return Heterogeneity::Homo;
    if (text == "hetero-l2")
        return Heterogeneity::HeteroL2;
    if (text == "hetero-l3")
        return Heterogeneity::HeteroL3;
    return std::nullopt;
}

std::optional<CompetingProcess> competing_process(Heterogeneity level, int worker, int workers, double period_s)
{
    if (level == Heterogeneity::Homo || workers < 2 || worker <= 0)
        return std::nullopt;
    const double extent = level == Heterogeneity::HeteroL2 ? 2.0 : 3.0;
    CompetingProcess p;
    p.run_probability = static_cast<double>(worker) / static_cast<double>(workers - 1);
    p.cpu = 1.0 - 1.0 / extent;
    p.period_s = period_s;
    return p;
}

} // namespace fulcrum::perf
