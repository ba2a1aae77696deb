// Recorder throughput: iteration rows per second sustained into a file database through
// RunRecorder (queue, writer thread, batched transactions), against a baseline in the same
// run: the same rows inserted by a bare prepared statement in one transaction, the most
// SQLite itself can do with this schema.
//
//   recorder_throughput [ROWS] [DIR]     (defaults: 2,000,000 rows, /tmp)

#include "db/run_recorder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sqlite3.h>
#include <string>
#include <vector>

using namespace fulcrum;

namespace {

std::vector<IterationRecord> iteration(std::int64_t k, int workers)
{
    std::vector<IterationRecord> rows(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w) {
        auto& r = rows[static_cast<std::size_t>(w)];
        r.worker = w;
        r.iteration = k;
        r.start_s = static_cast<double>(k) * 0.1;
        r.end_s = r.start_s + 0.05 + 0.001 * w;
        r.batch_size = 32 + w % 7;
        r.compute_s = 0.045;
        r.comm_s = 0.005;
        r.wait_s = 0.01;
        r.cpu_share = 0.93;
        r.memory_share = 0.71;
        r.speed = 700.5;
        r.predicted_speed = 698.25;
        r.loss = 0.4321;
        r.decision = "uniform";
    }
    return rows;
}

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double recorder_rate(const std::filesystem::path& file, std::int64_t rows, int workers)
{
    std::filesystem::remove(file);
    const auto start = std::chrono::steady_clock::now();
    {
        db::RunRecorder recorder(file);
        recorder.begin_run({ 0, "bench", "{}", "virtual", 1, "", "", "", "", "" });
        for (std::int64_t k = 0; k < rows / workers; ++k)
            recorder.record_iterations(iteration(k, workers));
        recorder.flush();
    }
    return static_cast<double>(rows) / seconds_since(start);
}

double bare_sqlite_rate(const std::filesystem::path& file, std::int64_t rows, int workers)
{
    std::filesystem::remove(file);
    {
        db::RunRecorder create(file);
    } // same schema and pragmas
    sqlite3* db = nullptr;
    sqlite3_open(file.c_str(), &db);
    sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", nullptr, nullptr, nullptr);
    sqlite3_stmt* insert = nullptr;
    sqlite3_prepare_v2(db,
        "INSERT INTO iterations VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, NULL, "
        "NULL, NULL)",
        -1, &insert, nullptr);
    const auto start = std::chrono::steady_clock::now();
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (std::int64_t k = 0; k < rows / workers; ++k)
        for (const auto& r : iteration(k, workers)) {
            sqlite3_bind_int64(insert, 1, r.job);
            sqlite3_bind_int64(insert, 2, r.iteration);
            sqlite3_bind_int64(insert, 3, r.worker);
            sqlite3_bind_double(insert, 4, r.start_s);
            sqlite3_bind_double(insert, 5, r.end_s);
            sqlite3_bind_int64(insert, 6, r.batch_size);
            sqlite3_bind_double(insert, 7, r.compute_s);
            sqlite3_bind_double(insert, 8, r.comm_s);
            sqlite3_bind_double(insert, 9, r.wait_s);
            sqlite3_bind_double(insert, 10, r.cpu_share);
            sqlite3_bind_double(insert, 11, r.memory_share);
            sqlite3_bind_double(insert, 12, r.speed);
            sqlite3_bind_double(insert, 13, *r.predicted_speed);
            sqlite3_bind_double(insert, 14, r.loss);
            sqlite3_bind_text(insert, 15, r.decision.c_str(), -1, SQLITE_STATIC);
            sqlite3_step(insert);
            sqlite3_reset(insert);
        }
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    const double rate = static_cast<double>(rows) / seconds_since(start);
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return rate;
}

} // namespace

int main(int argc, char** argv)
{
    const std::int64_t rows = argc > 1 ? std::stoll(argv[1]) : 2'000'000;
    const std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
    const int workers = 32;
    const auto file = dir / "fulcrum-recorder-bench.db";
    std::printf("recorder throughput: %lld iteration rows (%d workers per iteration) into %s\n",
        static_cast<long long>(rows), workers, file.c_str());
    // Alternate the two so drift of a shared machine hits both alike; report the medians.
    std::vector<double> recorder, bare;
    for (int round = 0; round < 3; ++round) {
        recorder.push_back(recorder_rate(file, rows, workers));
        bare.push_back(bare_sqlite_rate(file, rows, workers));
        std::printf("  round %d: RunRecorder %9.0f rows/s   bare SQLite %9.0f rows/s\n", round + 1, recorder.back(),
            bare.back());
    }
    std::sort(recorder.begin(), recorder.end());
    std::sort(bare.begin(), bare.end());
    std::printf("median: RunRecorder %.0f rows/s, bare SQLite %.0f rows/s, ratio %.2f (target >= 200000 rows/s: %s)\n",
        recorder[1], bare[1], recorder[1] / bare[1], recorder[1] >= 200000 ? "met" : "NOT met");
    for (const char* suffix : { "", "-wal", "-shm" })
        std::filesystem::remove(file.string() + suffix);
    return 0;
}
