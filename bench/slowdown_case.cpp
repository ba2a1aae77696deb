#include "slowdown_case.h"

#include "worker_processes.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <variant>
#include <vector>

namespace fulcrum::bench {

namespace {

using namespace protocol;
using Clock = std::chrono::steady_clock;

constexpr int kSettledRun = 5; // iterations whose median is the time per iteration
constexpr double kTolerance = 0.10;

// Compute-bound on purpose (a 200-256-4 MLP on 1,000 samples a worker is tens of ms of
// compute against about 0.2 MB of parameters each way), so the load shows in the batch time.
std::string job_json(const std::string& policy)
{
    return R"({"name": "competing-load", "seed": 3, "mode": "real", "worker_timeout_s": 30,
      "data": {"source": "synthetic", "train_size": 32000, "test_size": 300, "dim": 200, "classes": 4},
      "model": {"type": "mlp", "hidden": [256]},
      "training": {"total_batch": 16000, "learning_rate": 0.05, "iterations": 100000000, "eval_interval": 100000000},
      "policy": )"
        + policy + R"(,
      "workers": [{"name": "remote", "count": 2, "speed": 1000, "remote": true}]})";
}

struct Iteration {
    double start_s = 0; // the barrier's release on the run clock
    double loaded_share = 0;
    Clock::time_point arrived;
};

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

} // namespace

SlowdownResult slowdown_case(testing_support::Served& served, testing_support::WsClient& op,
    const SlowdownOptions& options, const std::string& id)
{
    const Reply submitted = op.request(SubmitJob { "s" + id, job_json(options.policy_json) }, "s" + id);
    if (submitted.error) {
        std::fprintf(stderr, "straggler_response: %s\n", submitted.error->message.c_str());
        std::exit(1);
    }
    const JobId job = *submitted.job;
    const std::string token = *served.tokens.token_for(Role::Worker);
    const std::vector<int> cores = allowed_cores(); // main checked there are two
    const int loaded_core = cores.at(0);
    const pid_t loaded = spawn_worker(served.server.port(), job, 0, token, loaded_core);
    const pid_t other = spawn_worker(served.server.port(), job, 1, token, cores.at(1));
    op.request(Subscribe { "sub" + id, { Stream::Iterations }, job, {} }, "sub" + id);

    std::map<std::int64_t, Iteration> seen;
    std::int64_t first_loaded = -1;
    Clock::time_point load_started;
    pid_t load = -1;
    for (;;) {
        const auto rows = op.receive_until<IterationRows>([job](const IterationRows& r) { return r.job == job; });
        if (rows.rows.size() != 2)
            continue;
        Iteration it;
        it.arrived = Clock::now();
        it.start_s = std::min(rows.rows[0].start_s, rows.rows[1].start_s);
        int total = 0;
        for (const auto& r : rows.rows) {
            total += r.batch_size;
            if (r.worker == 0)
                it.loaded_share = r.batch_size;
        }
        it.loaded_share /= std::max(1, total);
        seen[rows.iteration] = it;
        if (load < 0 && rows.iteration >= options.at) {
            load = spawn_competing_load(loaded_core, options.load);
            load_started = Clock::now();
            first_loaded = rows.iteration + 1;
        }
        if (load >= 0 && rows.iteration >= first_loaded + options.window)
            break;
    }
    op.request(Unsubscribe { "sub" + id }, "sub" + id);
    op.request(JobCommand { "c" + id, JobAction::Cancel, job }, "c" + id);
    end_process(load);
    end_process(loaded);
    end_process(other);

    // An iteration's time runs from its barrier's release to the next one's.
    const auto duration = [&](std::int64_t i) {
        const auto a = seen.find(i);
        const auto b = seen.find(i + 1);
        return a == seen.end() || b == seen.end() ? NAN : b->second.start_s - a->second.start_s;
    };
    if (options.series) {
        std::printf("%s: ms per iteration, the load from |:", id.c_str());
        for (std::int64_t i = first_loaded - 10; i < first_loaded + options.window; ++i)
            std::printf("%s%.0f", i == first_loaded ? " | " : " ", 1000 * duration(i));
        std::printf("\n");
    }
    SlowdownResult result;
    std::vector<double> before, after, share_after;
    for (std::int64_t i = first_loaded - 10; i < first_loaded; ++i)
        before.push_back(duration(i));
    const std::int64_t last = first_loaded + options.window - 1;
    for (std::int64_t i = last - options.window / 3; i < last; ++i) {
        after.push_back(duration(i));
        share_after.push_back(seen[i].loaded_share);
    }
    std::erase_if(before, [](double d) { return std::isnan(d); });
    std::erase_if(after, [](double d) { return std::isnan(d); });
    result.before_s = median(before);
    result.after_s = median(after);
    result.loaded_share_before = seen[first_loaded - 1].loaded_share;
    result.loaded_share_after = median(share_after);
    // The time per iteration at k is the median of iterations k to k + 4, which rides out a
    // single iteration's scheduling noise; it has settled at the first k where it is within
    // 10 % of the new steady value. (Waiting until it stays there to the end of the window
    // measures the two cores' noise: both policies then read 20 to 40 iterations.)
    const auto settled_from = [&](std::int64_t k) {
        std::vector<double> run;
        for (int j = 0; j < kSettledRun; ++j)
            run.push_back(duration(k + j));
        if (std::any_of(run.begin(), run.end(), [](double d) { return std::isnan(d); }))
            return false;
        return std::abs(median(run) - result.after_s) <= kTolerance * result.after_s;
    };
    for (std::int64_t k = first_loaded; k + kSettledRun <= last; ++k)
        if (settled_from(k)) {
            result.settle_iterations = static_cast<int>(k - first_loaded);
            result.settle_s = std::chrono::duration<double>(seen[k].arrived - load_started).count();
            break;
        }
    // The policy's own response: the loaded worker's share of the batch (a running median of
    // 5 too: its measured speed is as noisy as the times), within 10 % of where it ends.
    for (std::int64_t k = first_loaded; k + kSettledRun <= last; ++k) {
        std::vector<double> run;
        for (int j = 0; j < kSettledRun; ++j)
            run.push_back(seen[k + j].loaded_share);
        if (std::abs(median(run) - result.loaded_share_after) <= kTolerance * result.loaded_share_after) {
            result.share_settle_iterations = static_cast<int>(k - first_loaded);
            break;
        }
    }
    return result;
}

} // namespace fulcrum::bench
