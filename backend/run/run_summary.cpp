#include "run/run_summary.h"

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>

namespace fulcrum::run {

std::string to_json(const RunSummary& s)
{
    boost::json::object o;
    o["run_id"] = s.run;
    o["database"] = s.database;
    o["scenario"] = s.scenario;
    o["mode"] = s.mode;
    o["seed"] = s.seed;
    o["model"] = s.model;
    o["workers"] = s.workers;
    o["sync"] = s.sync;
    o["policy"] = s.policy;
    o["iterations"] = s.iterations;
    o["updates"] = s.updates;
    if (s.epochs)
        o["epochs"] = *s.epochs;
    o["virtual_seconds"] = s.mode == "real" ? 0.0 : s.time_s;
    o["run_seconds"] = s.time_s;
    o["wall_seconds"] = s.wall_s;
    o["mean_iteration_seconds"] = s.mean_iteration_s;
    o["final_test_accuracy"] = s.final_accuracy;
    o["best_test_accuracy"] = s.best_accuracy;
    o["final_test_loss"] = s.final_test_loss;
    o["stopped"] = s.stopped;
    if (s.target_time_s) {
        o["target_seconds"] = *s.target_time_s;
        o["target_updates"] = *s.target_updates;
    }
    if (!s.phases.empty()) {
        boost::json::array phases;
        for (const PhaseSummary& p : s.phases)
            phases.push_back(
                boost::json::object { { "from_iteration", p.first_iteration }, { "iterations", p.iterations },
                    { "setting", p.setting }, { "mean_iteration_seconds", p.mean_iteration_s } });
        o["phases"] = std::move(phases);
    }
    return boost::json::serialize(o);
}

std::string to_text(const RunSummary& s)
{
    char epochs[64] = "";
    if (s.epochs)
        std::snprintf(epochs, sizeof epochs, " (%.2f epochs)", *s.epochs);
    char buffer[1024];
    std::snprintf(buffer, sizeof buffer,
        "%s  %s\n"
        "  model            %s, %d workers\n"
        "  iterations       %lld%s\n"
        "  test accuracy    %.4f final, %.4f best (test loss %.4f)\n"
        "  %-16s %.1f s (%.4f s per iteration)\n"
        "  wall time        %.1f s\n"
        "  recorded run     %lld in %s\n",
        s.stopped ? "Stopped early:" : "Finished:", s.scenario.c_str(), s.model.c_str(), s.workers,
        static_cast<long long>(s.iterations), epochs, s.final_accuracy, s.best_accuracy, s.final_test_loss,
        s.mode == "real" ? "measured time" : "virtual time", s.time_s, s.mean_iteration_s, s.wall_s,
        static_cast<long long>(s.run), s.database.empty() ? "(not recorded)" : s.database.c_str());
    std::string text = buffer;
    // The same cluster under each setting the scenario switched to, and the difference.
    for (std::size_t i = 0; i < s.phases.size(); ++i) {
        const PhaseSummary& p = s.phases[i];
        std::snprintf(buffer, sizeof buffer, "  %-16s %.4f s per iteration under %s (iterations %lld-%lld)",
            i == 0 ? "phases" : "", p.mean_iteration_s, p.setting.c_str(), static_cast<long long>(p.first_iteration),
            static_cast<long long>(p.first_iteration + p.iterations - 1));
        text += buffer;
        if (i > 0 && s.phases[i - 1].mean_iteration_s > 0) {
            const double change = 100.0 * (p.mean_iteration_s / s.phases[i - 1].mean_iteration_s - 1.0);
            std::snprintf(buffer, sizeof buffer, ", %.0f %% %s", std::abs(change), change <= 0 ? "less" : "more");
            text += buffer;
        }
        text += "\n";
    }
    return text;
}

} // namespace fulcrum::run
