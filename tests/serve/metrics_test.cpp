#include "serve/metrics.h"

#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>

using namespace fulcrum;
using namespace fulcrum::serve;

namespace {

IterationRecord row(WorkerId worker, int batch, double end_s, double wait_s)
{
    IterationRecord r;
    r.job = 2;
    r.worker = worker;
    r.iteration = 9;
    r.start_s = 1.0;
    r.end_s = end_s;
    r.batch_size = batch;
    r.compute_s = end_s - 1.0 - 0.1;
    r.comm_s = 0.1;
    r.wait_s = wait_s;
    r.speed = batch / r.compute_s;
    return r;
}

DaemonMetrics two_workers()
{
    DaemonMetrics m;
    JobMetrics j;
    j.status.job = 2;
    j.status.name = "a \"quoted\" name";
    j.status.state = protocol::JobState::Running;
    j.status.iteration = 9;
    j.status.iterations = 100;
    j.status.accuracy = 0.5;
    j.status.link = protocol::JobStatus::LinkUse { 120, 31, 4.25 };
    j.last_rows = protocol::IterationRows { 2, 9, { row(0, 40, 1.5, 0.5), row(1, 24, 2.0, 0.0) }, 0 };
    protocol::WorkerState pinned;
    pinned.worker = 0;
    pinned.pinned = 40;
    pinned.stalled_since = 3.5;
    pinned.predicted_s = 0.04;
    protocol::WorkerState excluded;
    excluded.worker = 1;
    excluded.excluded = true;
    j.workers = { pinned, excluded };
    m.jobs.push_back(j);
    m.clients = 3;
    m.frames_dropped = 7;
    m.queued_jobs = 1;
    m.placements = 4;
    m.pooled_idle = 2;
    m.pooled_assigned = 5;
    return m;
}

// Every sample line of the exposition, "name{labels}" -> value text.
std::map<std::string, std::string> samples(const std::string& text)
{
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#') {
            const auto space = line.rfind(' ');
            out[line.substr(0, space)] = line.substr(space + 1);
        }
    return out;
}

} // namespace

TEST(Metrics, TheExpositionFollowsPrometheusConventions)
{
    const std::string text = prometheus_exposition(two_workers());
    // Every family has HELP and TYPE lines; every sample belongs to a family declared before it.
    std::set<std::string> declared;
    std::istringstream in(text);
    static const std::regex type_line("# TYPE (fulcrum_[a-z_]+) (gauge|counter)");
    static const std::regex sample_line(R"((fulcrum_[a-z_]+)(\{[^}]*\})? (-?[0-9.e+-]+|NaN))");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_match(line, m, type_line)) {
            declared.insert(m[1]);
            if (m[2] == "counter") {
                EXPECT_TRUE(m[1].str().ends_with("_total")) << line;
            }
        } else if (line.rfind("# HELP ", 0) != 0) {
            ASSERT_TRUE(std::regex_match(line, m, sample_line)) << line;
            EXPECT_TRUE(declared.count(m[1])) << line;
        }
    }
    const auto s = samples(text);
    EXPECT_EQ(s.at("fulcrum_daemon_clients"), "3");
    EXPECT_EQ(s.at("fulcrum_daemon_frames_dropped_total"), "7");
    EXPECT_EQ(s.at("fulcrum_scheduler_queue_length_jobs"), "1");
    EXPECT_EQ(s.at("fulcrum_scheduler_placements_total"), "4");
    EXPECT_EQ(s.at(R"(fulcrum_worker_pool_workers{state="idle"})"), "2");
    EXPECT_EQ(s.at(R"(fulcrum_worker_pool_workers{state="assigned"})"), "5");
    EXPECT_EQ(s.at(R"(fulcrum_job_state{job_id="2",tenant="default",state="running"})"), "1");
    EXPECT_EQ(s.at(R"(fulcrum_job_state{job_id="2",tenant="default",state="paused"})"), "0");
    EXPECT_EQ(s.at(R"(fulcrum_job_iterations_completed{job_id="2",tenant="default"})"), "9");
    EXPECT_EQ(s.at(R"(fulcrum_job_test_accuracy_ratio{job_id="2",tenant="default"})"), "0.5");
    EXPECT_EQ(s.at(R"(fulcrum_job_link_transfers_total{job_id="2",tenant="default"})"), "120");
    EXPECT_EQ(s.at(R"(fulcrum_job_link_held_transfers_total{job_id="2",tenant="default"})"), "31");
    EXPECT_EQ(s.at(R"(fulcrum_job_link_wait_seconds_total{job_id="2",tenant="default"})"), "4.25");
    EXPECT_EQ(s.at(R"(fulcrum_worker_batch_size_samples{job_id="2",tenant="default",worker="1"})"), "24");
    // Worker 1 finished last: the barrier waited for it.
    EXPECT_EQ(s.at(R"(fulcrum_worker_straggler{job_id="2",tenant="default",worker="1"})"), "1");
    EXPECT_EQ(s.at(R"(fulcrum_worker_straggler{job_id="2",tenant="default",worker="0"})"), "0");
    // Worker 0: 0.4 s compute, 0.1 s communication, 0.5 s wait of a 1 s iteration.
    EXPECT_DOUBLE_EQ(
        std::stod(s.at(R"(fulcrum_worker_wait_share_ratio{job_id="2",tenant="default",worker="0"})")), 0.5);
    EXPECT_DOUBLE_EQ(
        std::stod(s.at(R"(fulcrum_worker_compute_share_ratio{job_id="2",tenant="default",worker="0"})")), 0.4);
    EXPECT_EQ(s.at(R"(fulcrum_worker_excluded{job_id="2",tenant="default",worker="1"})"), "1");
    EXPECT_EQ(s.at(R"(fulcrum_worker_pinned_batch_size_samples{job_id="2",tenant="default",worker="0"})"), "40");
    EXPECT_EQ(s.at(R"(fulcrum_worker_stalled{job_id="2",tenant="default",worker="0"})"), "1");
    EXPECT_EQ(s.at(R"(fulcrum_worker_stalled{job_id="2",tenant="default",worker="1"})"), "0");
    // A policy without predictions gives no predicted-speed samples, not zeros.
    EXPECT_EQ(text.find("fulcrum_worker_predicted_speed_samples_per_second{"), std::string::npos);
    // Label values are escaped.
    EXPECT_NE(text.find(R"(name="a \"quoted\" name")"), std::string::npos) << text;
}

TEST(Metrics, LabelValuesAreEscaped)
{
    EXPECT_EQ(escape_label_value(R"(back\slash "q")"), R"(back\\slash \"q\")");
    EXPECT_EQ(escape_label_value("two\nlines"), "two\\nlines");
}
