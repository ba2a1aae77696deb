// list-runs reads a run store only when it changed: the catalogue keeps each store's listing
// while the store's files keep their identity, size and times, once those are settled.

#include "daemon/run_catalogue.h"
#include "db/run_recorder.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::daemon;
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
