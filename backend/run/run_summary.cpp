#include "run/run_summary.h"

#include <boost/json.hpp>
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
    o["epochs"] = s.epochs;
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
    return boost::json::serialize(o);
}

std::string to_text(const RunSummary& s)
{
    char buffer[1024];
    std::snprintf(buffer, sizeof buffer,
        "%s  %s\n"
        "  model            %s, %d workers\n"
        "  iterations       %lld (%.2f epochs)\n"
        "  test accuracy    %.4f final, %.4f best (test loss %.4f)\n"
        "  %-16s %.1f s (%.4f s per iteration)\n"
        "  wall time        %.1f s\n"
        "  recorded run     %lld in %s\n",
        s.stopped ? "Stopped early:" : "Finished:", s.scenario.c_str(), s.model.c_str(), s.workers,
        static_cast<long long>(s.iterations), s.epochs, s.final_accuracy, s.best_accuracy, s.final_test_loss,
        s.mode == "real" ? "measured time" : "virtual time", s.time_s, s.mean_iteration_s, s.wall_s,
        static_cast<long long>(s.run), s.database.empty() ? "(not recorded)" : s.database.c_str());
    return buffer;
}

} // namespace fulcrum::run
