// list-runs reads a run store only when it changed: the catalogue keeps each store's listing
// while the store's files keep their identity, size and times, once those are settled.

#include "archive/run_catalogue.h"
#include "db/run_recorder.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <stdexcept>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::archive;
namespace fs = std::filesystem;

namespace {

class RunCatalogueTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        fs::remove_all(dir);
        fs::create_directories(dir / "runs");
    }
    void TearDown() override { fs::remove_all(dir); }
    // A store of `runs` runs, each ended with `status`.
    void record(const std::string& name, int runs, const std::string& status = "finished")
    {
        db::RunRecorder recorder(dir / "runs" / name);
        for (int k = 0; k < runs; ++k) {
            db::RunInfo run;
            run.name = name + " run " + std::to_string(k);
            run.mode = "virtual";
            recorder.end_run(recorder.begin_run(run), status);
        }
    }
    std::vector<std::string> names(const std::vector<protocol::RunListing>& listed) const
    {
        std::vector<std::string> out;
        out.reserve(listed.size());
        for (const auto& l : listed)
            out.push_back(l.database + ": " + l.name + " (" + l.status + ")");
        return out;
    }

    fs::path dir = fs::temp_directory_path() / ("fulcrum-catalogue-" + std::to_string(::getpid()));
    ServerFolders folders { dir };
    RunCatalogue catalogue { folders };
    // Long after every file the test writes: each is settled.
    std::chrono::system_clock::time_point later = std::chrono::system_clock::now() + std::chrono::hours(1);
};

} // namespace

TEST_F(RunCatalogueTest, AStoreIsReadAgainOnlyWhenItChanged)
{
    record("a.db", 1);
    record("b.db", 2);
    const auto first = names(catalogue.runs(later));
    EXPECT_EQ(first,
        (std::vector<std::string> {
            "a.db: a.db run 0 (finished)", "b.db: b.db run 0 (finished)", "b.db: b.db run 1 (finished)" }));
    EXPECT_EQ(catalogue.stores_read(), 2u);
    EXPECT_EQ(names(catalogue.runs(later)), first);
    EXPECT_EQ(catalogue.stores_read(), 2u) << "neither store changed";

    record("a.db", 1, "stopped"); // a second run in a.db
    const auto second = names(catalogue.runs(later));
    EXPECT_EQ(second,
        (std::vector<std::string> { "a.db: a.db run 0 (finished)", "a.db: a.db run 0 (stopped)",
            "b.db: b.db run 0 (finished)", "b.db: b.db run 1 (finished)" }));
    EXPECT_EQ(catalogue.stores_read(), 3u) << "a.db only";

    fs::remove(dir / "runs" / "b.db");
    fs::copy_file(dir / "runs" / "a.db", dir / "runs" / "b.db");
    EXPECT_EQ(names(catalogue.runs(later)).size(), 4u) << "b.db replaced by a copy of a.db: read again";
    EXPECT_EQ(catalogue.stores_read(), 4u);
}

TEST_F(RunCatalogueTest, AStoreChangedWithinTheLastSecondIsReadEachTime)
{
    record("a.db", 1);
    const auto now = std::chrono::system_clock::now();
    catalogue.runs(now);
    catalogue.runs(now);
    EXPECT_EQ(catalogue.stores_read(), 2u) << "a change within the same tick would look the same";
    catalogue.runs(later);
    catalogue.runs(later);
    EXPECT_EQ(catalogue.stores_read(), 3u);
}

TEST_F(RunCatalogueTest, AnUnreadableStoreIsListedWithWhyAndReadAgainEachTime)
{
    std::ofstream(dir / "runs" / "broken.db") << "not a database";
    for (int k = 0; k < 2; ++k) {
        const auto listed = catalogue.runs(later);
        ASSERT_EQ(listed.size(), 1u);
        EXPECT_EQ(listed[0].database, "broken.db");
        EXPECT_EQ(listed[0].status.rfind("unreadable: ", 0), 0u) << listed[0].status;
    }
    EXPECT_EQ(catalogue.stores_read(), 2u);
}

// A store reached through a link inside the runs folder: SQLite keeps its WAL beside the file
// the link leads to, where a live job's commits go while the store's own file stays as it was.
TEST_F(RunCatalogueTest, ALinkedStoreIsReadAgainWhenTheStoreItLeadsToIsWrittenToItsWal)
{
    record("job-3.db", 1);
    fs::create_symlink(dir / "runs" / "job-3.db", dir / "runs" / "latest.db");
    EXPECT_EQ(catalogue.runs(later).size(), 2u);
    db::RunRecorder live(dir / "runs" / "job-3.db"); // open: its commits stay in the WAL
    db::RunInfo run;
    run.name = "second";
    run.mode = "virtual";
    live.begin_run(run);
    const auto listed = names(catalogue.runs(later));
    EXPECT_EQ(listed,
        (std::vector<std::string> { "job-3.db: job-3.db run 0 (finished)", "job-3.db: second (running)",
            "latest.db: job-3.db run 0 (finished)", "latest.db: second (running)" }));
}

// A live job's store changes at every iteration: back-to-back listings read it at most once a
// second, its counts up to a second old, and at once again when the time has passed.
TEST_F(RunCatalogueTest, AStoreWithARunningRunIsReadAtMostOnceASecond)
{
    db::RunRecorder recorder(dir / "runs" / "live.db");
    db::RunInfo info;
    info.name = "live";
    info.mode = "virtual";
    recorder.begin_run(info);
    const auto rows = [&](std::int64_t iteration) {
        std::vector<IterationRecord> out(3);
        for (int w = 0; w < 3; ++w) {
            out[static_cast<std::size_t>(w)].worker = w;
            out[static_cast<std::size_t>(w)].iteration = iteration;
        }
        recorder.record_iterations(out);
        recorder.flush();
    };
    rows(0);
    const auto t0 = std::chrono::system_clock::now();
    auto listed = catalogue.runs(t0);
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].status, "running");
    EXPECT_EQ(listed[0].iterations, 1);
    EXPECT_EQ(listed[0].rows, 3);
    EXPECT_EQ(catalogue.stores_read(), 1u);

    rows(1);
    listed = catalogue.runs(t0 + std::chrono::milliseconds(900));
    EXPECT_EQ(listed.at(0).rows, 3) << "within the second: the listing read at t0";
    EXPECT_EQ(catalogue.stores_read(), 1u);

    listed = catalogue.runs(t0 + std::chrono::milliseconds(1000));
    EXPECT_EQ(listed.at(0).iterations, 2);
    EXPECT_EQ(listed.at(0).rows, 6);
    EXPECT_EQ(catalogue.stores_read(), 2u);

    listed = catalogue.runs(t0 - std::chrono::seconds(5));
    EXPECT_EQ(catalogue.stores_read(), 3u) << "a clock set back reads the store again";

    recorder.finish_run("finished", "{}");
    recorder.flush();
    listed = catalogue.runs(later);
    EXPECT_EQ(listed.at(0).status, "finished") << "a second on, the ended run is read as it ended";
    EXPECT_EQ(catalogue.stores_read(), 4u);
    catalogue.runs(later);
    EXPECT_EQ(catalogue.stores_read(), 4u) << "ended and settled: kept by its stamp";
}

// Listings asked while a pass runs are answered together by the next pass, which starts after
// they were asked and so sees what changed before: here the first answer writes a store and
// asks again, as a second client would while the first pass was still answering.
TEST_F(RunCatalogueTest, AListingAskedDuringAPassIsAnsweredByTheNextPass)
{
    record("a.db", 1);
    std::vector<std::vector<std::string>> answered;
    const auto answer_into = [&](const std::vector<protocol::RunListing>* runs, const std::exception_ptr& error) {
        ASSERT_FALSE(error);
        ASSERT_NE(runs, nullptr);
        answered.push_back(names(*runs));
    };
    catalogue.list([&](const std::vector<protocol::RunListing>* runs, const std::exception_ptr& error) {
        answer_into(runs, error);
        record("b.db", 1);
        catalogue.list(answer_into);
        catalogue.list(answer_into);
        EXPECT_EQ(answered.size(), 1u) << "the two asked during the pass wait for the next";
    });
    ASSERT_EQ(answered.size(), 3u);
    EXPECT_EQ(catalogue.passes(), 2u) << "one pass for the first request, one for the two asked during it";
    EXPECT_EQ(answered[0], (std::vector<std::string> { "a.db: a.db run 0 (finished)" }));
    const std::vector<std::string> both { "a.db: a.db run 0 (finished)", "b.db: b.db run 0 (finished)" };
    EXPECT_EQ(answered[1], both);
    EXPECT_EQ(answered[2], both);
}

// Clients listing from several disk threads at once: each is answered once, whichever thread
// ran the pass that answered it.
TEST_F(RunCatalogueTest, EveryListingIsAnsweredOnceFromWhicheverThreadRanItsPass)
{
    record("a.db", 2);
    constexpr int kThreads = 6, kEach = 20;
    std::atomic<int> answered { 0 }, wrong { 0 };
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            for (int k = 0; k < kEach; ++k)
                catalogue.list([&](const std::vector<protocol::RunListing>* runs, const std::exception_ptr& error) {
                    wrong += error || !runs || runs->size() != 2u;
                    ++answered;
                });
        });
    for (std::thread& t : threads)
        t.join();
    EXPECT_EQ(answered.load(), kThreads * kEach);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_LE(catalogue.passes(), static_cast<std::uint64_t>(kThreads * kEach));
    EXPECT_GE(catalogue.passes(), 1u);
}

// A job's end is listed at once: fulcrumd says the store's run ended, and a listing within the
// second reads the store anew, whatever it read of it before.
TEST_F(RunCatalogueTest, ARunThatEndedIsListedAsEndedAtOnce)
{
    const fs::path store = dir / "runs" / "job-1.db";
    db::RunRecorder recorder(store);
    db::RunInfo info;
    info.name = "job";
    info.mode = "virtual";
    recorder.begin_run(info);
    recorder.flush();
    const auto t0 = std::chrono::system_clock::now();
    EXPECT_EQ(catalogue.runs(t0).at(0).status, "running");
    recorder.finish_run("finished", "{}");
    recorder.flush();
    EXPECT_EQ(catalogue.runs(t0 + std::chrono::milliseconds(100)).at(0).status, "running")
        << "within the second, nobody said it ended";
    catalogue.run_ended(store);
    EXPECT_EQ(catalogue.runs(t0 + std::chrono::milliseconds(200)).at(0).status, "finished");
}

// Another file put in a live store's place (a new inode) is read at once.
TEST_F(RunCatalogueTest, AStoreReplacedWithinTheSecondIsReadAgain)
{
    record("done.db", 2);
    {
        db::RunRecorder recorder(dir / "runs" / "live.db");
        db::RunInfo info;
        info.name = "live";
        info.mode = "virtual";
        recorder.begin_run(info);
    }
    const auto t0 = std::chrono::system_clock::now();
    EXPECT_EQ(catalogue.runs(t0).size(), 3u);
    // Copied beside it, then renamed over it: the new file has an inode of its own.
    fs::copy_file(dir / "runs" / "done.db", dir / "runs" / "live.tmp");
    fs::rename(dir / "runs" / "live.tmp", dir / "runs" / "live.db");
    const auto listed = names(catalogue.runs(t0 + std::chrono::milliseconds(100)));
    EXPECT_EQ(listed,
        (std::vector<std::string> { "done.db: done.db run 0 (finished)", "done.db: done.db run 1 (finished)",
            "live.db: done.db run 0 (finished)", "live.db: done.db run 1 (finished)" }));
}

// An answer that throws leaves the others answered and the next listing served; a pass with
// requests waiting after it hands the next pass to the queue it is given.
TEST_F(RunCatalogueTest, AThrowingAnswerHoldsUpNoOtherAndTheNextPassIsQueued)
{
    record("a.db", 1);
    std::vector<std::function<void()>> queued;
    const RunCatalogue::Post queue = [&](std::function<void()> pass) { queued.push_back(std::move(pass)); };
    int answered = 0;
    const auto count = [&](const std::vector<protocol::RunListing>* runs, const std::exception_ptr& error) {
        answered += runs && !error;
    };
    catalogue.list(
        [&](const std::vector<protocol::RunListing>*, const std::exception_ptr&) {
            catalogue.list(count, queue); // asked during the pass, as a second client would
            catalogue.list([](const std::vector<protocol::RunListing>*,
                               const std::exception_ptr&) { throw std::runtime_error("this client's reply failed"); },
                queue);
            catalogue.list(count, queue);
        },
        queue);
    EXPECT_EQ(catalogue.passes(), 1u);
    EXPECT_EQ(answered, 0) << "the three asked during the first pass wait for the next";
    ASSERT_EQ(queued.size(), 1u) << "the next pass goes to the queue, not on at once";
    queued.front()();
    EXPECT_EQ(catalogue.passes(), 2u);
    EXPECT_EQ(answered, 2) << "the answer after the one that threw was given too";
    catalogue.list(count, queue);
    EXPECT_EQ(answered, 3) << "the next request starts a pass of its own: none was left running";
    EXPECT_EQ(queued.size(), 1u);
}
