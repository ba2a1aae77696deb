// What checkpoints cost a training run: the demo job (MLP 784-256-128-10 on Fashion-MNIST,
// 4 workers, 2 server shards: a 1.9 MB state) on the virtual clock, recorded, with
// checkpoints off and at the default interval (every 500 iterations and 30 s), run in
// alternating pairs; prints each run's seconds per iteration and the median ratio. With
// --sync asp (or ssp, elastic-bsp) the job runs free of barriers: an iteration is then one
// update, and a checkpoint also holds the batches under way with their gradients.
//   checkpoint_overhead [--pairs 7] [--iterations 1500] [--every 500] [--sync bsp]

#include "run/run_scenario.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace fulcrum;

namespace {

double seconds_per_iteration(
    const scenario::Scenario& base, std::int64_t iterations, std::int64_t every, const std::filesystem::path& db)
{
    scenario::Scenario s = base;
    s.iterations = iterations;
    s.epochs.reset();
    s.checkpoint.every_iterations = every;
    s.checkpoint.every_seconds = every > 0 ? scenario::CheckpointSpec {}.every_seconds : 0;
    std::filesystem::remove(db);
    run::RunOptions options;
    options.mode = scenario::Mode::Virtual;
    options.database = db;
    const auto start = std::chrono::steady_clock::now();
    run::run_scenario(s, options);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return wall / static_cast<double>(iterations);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    int pairs = 7;
    std::int64_t iterations = 1500, every = 500;
    std::string sync_name = "bsp";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--pairs"))
            pairs = std::max(1, std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--iterations"))
            iterations = std::max<std::int64_t>(10, std::atoll(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--every"))
            every = std::max<std::int64_t>(1, std::atoll(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--sync") && sync::parse_sync_type(argv[i + 1]))
            sync_name = argv[i + 1];
        else {
            std::fprintf(stderr,
                "usage: checkpoint_overhead [--pairs N] [--iterations N] [--every N] [--sync "
                "bsp|backup|asp|ssp|elastic-bsp]\n");
            return 2;
        }
    }
    auto scenario = scenario::load_scenario(std::string(FULCRUM_SOURCE_DIR) + "/resources/scenarios/demo.json");
    scenario.changes.clear(); // the demo's cluster under its first policy throughout
    scenario.sync.type = *sync::parse_sync_type(sync_name);
    if (!sync::closes_every_iteration(scenario.sync.type))
        scenario.policy = {}; // uniform: no barrier to balance at
    const auto dir
        = std::filesystem::temp_directory_path() / ("fulcrum-checkpoint-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::vector<double> off, on, ratio;
    seconds_per_iteration(scenario, 50, 0, dir / "warm.db"); // data in the page cache, pools warm
    for (int p = 0; p < pairs; ++p) {
        off.push_back(seconds_per_iteration(scenario, iterations, 0, dir / "off.db"));
        on.push_back(seconds_per_iteration(scenario, iterations, every, dir / "on.db"));
        ratio.push_back(on.back() / off.back());
        std::printf("pair %d: off %.3f ms/iteration, checkpoints every %lld: %.3f ms/iteration (x%.4f)\n", p + 1,
            off.back() * 1e3, static_cast<long long>(every), on.back() * 1e3, ratio.back());
    }
    std::printf("median: off %.3f ms, on %.3f ms per iteration; overhead %+.2f %% (median of the pair ratios)\n",
        median(off) * 1e3, median(on) * 1e3, (median(ratio) - 1) * 100);
    std::filesystem::remove_all(dir);
    return 0;
}
