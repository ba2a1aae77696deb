#include "common/random.h"
#include "sync/barrier_window.h"
#include "sync/sync_spec.h"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <limits>

using namespace fulcrum;

namespace {

sync::EndTimes random_ends(Rng& rng, int n, int range)
{
    sync::EndTimes ends(static_cast<std::size_t>(n));
    for (auto& e : ends) {
        double t = uniform01(rng);
        for (int r = 0; r < range; ++r) {
            t += 0.1 + 2 * uniform01(rng);
            e.push_back(t);
        }
    }
    return ends;
}

// Every combination of picks.
double brute_force_span(const sync::EndTimes& ends)
{
    double best = std::numeric_limits<double>::infinity();
    std::vector<std::size_t> pick(ends.size(), 0);
    std::function<void(std::size_t)> recurse = [&](std::size_t i) {
        if (i == ends.size()) {
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (std::size_t w = 0; w < ends.size(); ++w) {
                lo = std::min(lo, ends[w][pick[w]]);
                hi = std::max(hi, ends[w][pick[w]]);
            }
            best = std::min(best, hi - lo);
            return;
        }
        for (pick[i] = 0; pick[i] < ends[i].size(); ++pick[i])
            recurse(i + 1);
    };
    recurse(0);
    return best;
}

void expect_consistent(const sync::EndTimes& ends, const sync::BarrierWindow& w)
{
    ASSERT_EQ(w.iterations.size(), ends.size());
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t i = 0; i < ends.size(); ++i) {
        ASSERT_GE(w.iterations[i], 1);
        ASSERT_LE(w.iterations[i], static_cast<int>(ends[i].size()));
        lo = std::min(lo, ends[i][static_cast<std::size_t>(w.iterations[i] - 1)]);
        hi = std::max(hi, ends[i][static_cast<std::size_t>(w.iterations[i] - 1)]);
    }
    EXPECT_DOUBLE_EQ(w.earliest, lo);
    EXPECT_DOUBLE_EQ(w.latest, hi);
}

} // namespace

TEST(BarrierWindow, ExactAlgorithmsMatchBruteForceOnSmallInputs)
{
    Rng rng(2024);
    for (int trial = 0; trial < 400; ++trial) {
        const int n = 1 + static_cast<int>(uniform_index(rng, 4));
        const int range = 1 + static_cast<int>(uniform_index(rng, 5));
        const sync::EndTimes ends = random_ends(rng, n, range);
        const double optimum = brute_force_span(ends);
        for (const std::string algorithm : { "exact", "zipline", "fullgridscan" }) {
            const sync::BarrierWindow w = sync::choose_window(algorithm, ends);
            expect_consistent(ends, w);
            EXPECT_NEAR(w.span(), optimum, 1e-12) << algorithm << " n=" << n << " R=" << range;
        }
        const sync::BarrierWindow grid = sync::grid_scan(ends);
        expect_consistent(ends, grid);
        EXPECT_GE(grid.span(), optimum - 1e-12);
    }
}

TEST(BarrierWindow, FastWorkersRunMoreIterationsBeforeTheBarrier)
{
    // Intervals 1 s and 3 s: both can end at 3 s, the fast worker after three iterations.
    const sync::EndTimes ends { { 1, 2, 3, 4, 5, 6 }, { 3, 6 } };
    const sync::BarrierWindow w = sync::min_window(ends);
    EXPECT_EQ(w.iterations, (std::vector<int> { 3, 1 }));
    EXPECT_DOUBLE_EQ(w.span(), 0);
}

TEST(BarrierWindow, BadInputNamesTheWorker)
{
    EXPECT_THROW(sync::min_window({}), std::invalid_argument);
    try {
        sync::zipline({ { 1, 2 }, { 3, 3 } });
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("worker 1"), std::string::npos);
    }
    EXPECT_THROW(sync::choose_window("magic", { { 1 } }), std::invalid_argument);
}

TEST(SyncSpec, ValidationNamesTheField)
{
    sync::SyncSpec spec;
    spec.type = sync::SyncType::Backup;
    spec.backups = 4;
    try {
        sync::validate(spec, 4);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("sync.backups"), std::string::npos);
    }
    spec.type = sync::SyncType::ElasticBsp;
    spec.algorithm = "exact";
    EXPECT_NO_THROW(sync::validate(spec, 4));
    EXPECT_EQ(sync::describe(spec), "elastic-bsp(R=15, exact)");
    const auto ends = sync::predict_end_times({ 10, 10 }, { { 1, 3 }, {} }, 3);
    EXPECT_EQ(ends[0], (std::vector<double> { 12, 14, 16 }));
}

TEST(BarrierWindow, EveryAlgorithmTheCatalogueOffersChoosesAWindow)
{
    const sync::EndTimes ends { { 1, 2, 3 }, { 1.5, 3.5 }, { 2.9, 4 } };
    for (const CatalogueEntry& a : sync::window_catalogue()) {
        const sync::BarrierWindow w = sync::choose_window(a.name, ends);
        EXPECT_EQ(w.iterations.size(), 3u) << a.name;
        EXPECT_FALSE(a.description.empty()) << a.name;
    }
    EXPECT_EQ(sync::window_algorithms().size(), sync::window_catalogue().size());
}
