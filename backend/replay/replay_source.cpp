#include "replay/replay_source.h"

#include "common/error.h"
#include "common/job_fold.h"
#include "common/json_fields.h"
#include "db/run_reader.h"
#include "protocol/codec.h"

#include <algorithm>

namespace fulcrum::replay {

using namespace protocol;

namespace {

// Where a recorded worker computed, from its profile (stores from before GPU workers say
// nothing: the CPU), and the SM share it asked for.
struct RecordedDevice {
    std::string device = "cpu";
    std::optional<int> sms;
};
RecordedDevice recorded_device(const std::string& profile_json)
{
    RecordedDevice r;
    try {
        const boost::json::value profile = parse_json_text(profile_json);
        if (const auto* o = profile.if_object()) {
            if (const auto* device = o->if_contains("device"); device && device->is_string())
                r.device = std::string(device->as_string());
            if (const auto* sms = o->if_contains("sms"); sms && sms->is_int64())
                r.sms = static_cast<int>(sms->as_int64());
        }
    } catch (const std::exception&) { // NOLINT(bugprone-empty-catch): an unreadable profile says nothing
    }
    return r;
}

// A recorded cluster-state message as the replay sends it: the recording job's fulcrumd id
// becomes its id in the run (an id of another job equal to that one takes the fulcrumd id
// instead, so no two jobs merge). Unset for a record that does not decode (a damaged store
// still replays, without that state).
std::optional<ClusterUpdate> replayed_cluster(const ClusterRecord& record, std::int64_t replay)
{
    Decoded<ServerMessage> decoded = decode_server(record.state);
    auto* update = decoded ? std::get_if<ClusterUpdate>(&*decoded.message) : nullptr;
    if (!update)
        return std::nullopt;
    const auto rename = [&](JobId& id) {
        if (id == record.cluster_job)
            id = record.job;
        else if (id == record.job)
            id = record.cluster_job;
    };
    for (GpuUsage& g : update->cluster.gpus)
        std::for_each(g.jobs.begin(), g.jobs.end(), rename);
    std::for_each(update->cluster.queue.begin(), update->cluster.queue.end(), rename);
    for (PooledWorker& p : update->cluster.pool)
        if (p.job >= 0)
            rename(p.job);
    update->replay = replay;
    update->time_s = record.time_s;
    return std::move(*update);
}

} // namespace

struct ReplaySource::Job {
    db::JobInfo info;
    std::vector<db::WorkerInfo> workers;
    std::vector<RecordedDevice> devices; // per worker, from its profile
    std::vector<std::int64_t> steps; // this job's steps, ascending
    std::vector<JobEvent> events; // this job's events, typed, in time order
    std::vector<std::int64_t> event_due; // the step each goes with
};

ReplaySource::ReplaySource(
    const std::filesystem::path& database, RunId run, std::int64_t replay_id, std::string database_name)
    : reader_(std::make_unique<db::RunReader>(database))
    , replay_(replay_id)
    , database_name_(std::move(database_name))
{
    run_ = reader_->run(run);
    marks_ = reader_->iteration_marks(run);
    for (const db::JobInfo& info : reader_->jobs(run)) {
        auto j = std::make_unique<Job>();
        j->info = info;
        jobs_[info.id] = std::move(j);
    }
    for (const db::WorkerInfo& w : reader_->workers(run)) {
        job(w.job).workers.push_back(w);
        job(w.job).devices.push_back(recorded_device(w.profile_json));
    }
    for (std::size_t i = 0; i < marks_.size(); ++i)
        job(marks_[i].job).steps.push_back(static_cast<std::int64_t>(i));
    events_ = reader_->events(run);
    std::stable_sort(
        events_.begin(), events_.end(), [](const EventRecord& a, const EventRecord& b) { return a.time_s < b.time_s; });
    for (auto& [id, j] : jobs_) {
        for (const EvaluationRecord& e : reader_->evaluations(run, id))
            evaluations_.push_back(e);
    }
    std::stable_sort(evaluations_.begin(), evaluations_.end(),
        [](const EvaluationRecord& a, const EvaluationRecord& b) { return a.time_s < b.time_s; });
    for (const EventRecord& e : events_) {
        event_due_.push_back(due(e.time_s));
        Job& j = job(e.job);
        j.events.push_back(typed(e));
        j.event_due.push_back(event_due_.back().step);
    }
    for (const EvaluationRecord& e : evaluations_)
        evaluation_due_.push_back(due(e.time_s));
    std::vector<ClusterRecord> clusters = reader_->cluster_states(run);
    std::stable_sort(clusters.begin(), clusters.end(),
        [](const ClusterRecord& a, const ClusterRecord& b) { return a.time_s < b.time_s; });
    for (const ClusterRecord& c : clusters)
        if (std::optional<ClusterUpdate> update = replayed_cluster(c, replay_id)) {
            clusters_.push_back(std::move(*update));
            cluster_due_.push_back(due(c.time_s));
        }
}

ReplaySource::~ReplaySource() = default;

// A job named by a row, event or worker but missing from the jobs table (a damaged or
// hand-edited store) still replays, under its id.
ReplaySource::Job& ReplaySource::job(JobId id)
{
    auto& slot = jobs_[id];
    if (!slot) {
        slot = std::make_unique<Job>();
        slot->info.id = id;
        slot->info.name = "job " + std::to_string(id);
    }
    return *slot;
}

JobId ReplaySource::first_job() const
{
    return jobs_.empty() ? 0 : jobs_.begin()->first;
}

double ReplaySource::end_time_s() const
{
    return marks_.empty() ? 0 : marks_.back().end_s;
}

double ReplaySource::time_at(std::int64_t position) const
{
    return position <= 0 || marks_.empty() ? 0 : mark(std::min(position, length()) - 1).end_s;
}

std::optional<std::int64_t> ReplaySource::position_after(JobId job, std::int64_t iteration) const
{
    const auto it = jobs_.find(job);
    if (it == jobs_.end())
        return std::nullopt;
    for (std::int64_t step : it->second->steps)
        if (mark(step).iteration == iteration)
            return step + 1;
    return std::nullopt;
}

std::int64_t ReplaySource::position_at_time(double time_s) const
{
    const auto it = std::upper_bound(
        marks_.begin(), marks_.end(), time_s, [](double t, const db::IterationMark& m) { return t < m.end_s; });
    return static_cast<std::int64_t>(it - marks_.begin());
}

// The first step whose barrier is not earlier than `time_s` (length(): after the last).
ReplaySource::Due ReplaySource::due(double time_s) const
{
    const auto it = std::lower_bound(
        marks_.begin(), marks_.end(), time_s, [](const db::IterationMark& m, double t) { return m.end_s < t; });
    return { static_cast<std::int64_t>(it - marks_.begin()), it != marks_.end() && it->end_s == time_s };
}

namespace {
// The index range of the items due with `step` (dues ascend: items are in time order).
template <class D> std::pair<std::size_t, std::size_t> due_range(const std::vector<D>& dues, std::int64_t step)
{
    const auto first
        = std::lower_bound(dues.begin(), dues.end(), step, [](const D& d, std::int64_t s) { return d.step < s; });
    const auto last = std::upper_bound(first, dues.end(), step, [](std::int64_t s, const D& d) { return s < d.step; });
    return { static_cast<std::size_t>(first - dues.begin()), static_cast<std::size_t>(last - dues.begin()) };
}
} // namespace

std::vector<IterationRecord> ReplaySource::rows_of(JobId job, std::int64_t iteration)
{
    return reader_->iterations(run_.id, job, iteration, iteration);
}

JobFold ReplaySource::fold_at(const Job& j, std::int64_t position) const
{
    // The events delivered before `position`, through the fold a live job's status reads.
    JobFold fold(static_cast<int>(j.workers.size()), j.info.policy, j.info.sync_model);
    for (std::size_t i = 0; i < j.events.size() && j.event_due[i] < position; ++i)
        fold.apply(j.events[i]);
    return fold;
}

JobStatus ReplaySource::status_at(Job& j, std::int64_t position, bool finished)
{
    JobStatus s;
    s.job = j.info.id;
    s.name = j.info.name;
    s.model = j.info.model;
    s.sync_model = j.info.sync_model;
    s.policy = j.info.policy;
    s.mode = run_.mode;
    s.workers = static_cast<int>(j.workers.size());
    s.iterations = j.info.iterations;
    s.database = database_name_;
    s.run = run_.id;
    const auto last = std::lower_bound(j.steps.begin(), j.steps.end(), position);
    if (last != j.steps.begin()) {
        const db::IterationMark& m = mark(*(last - 1));
        s.iteration = m.iteration + 1;
        s.time_s = m.end_s;
    }
    const JobFold fold = fold_at(j, position);
    s.state = fold.paused() ? JobState::Paused : JobState::Running;
    s.policy = fold.policy();
    s.sync_model = fold.sync_model();
    for (std::size_t i = 0; i < evaluations_.size() && (finished || evaluation_due_[i].step < position); ++i)
        if (evaluations_[i].job == j.info.id)
            s.accuracy = evaluations_[i].test_accuracy;
    // The run's own time at this point (its clock: virtual seconds for a virtual or paced
    // run), not how long the recording took to make or to replay: what the replay bar shows.
    s.elapsed_s = s.time_s;
    s.message = "replay of " + database_name_ + " run " + std::to_string(run_.id);
    if (finished) {
        if (run_.status == "finished")
            s.state = JobState::Finished;
        else if (run_.status == "failed")
            s.state = JobState::Failed;
        else
            s.state = JobState::Stopped;
        s.message
            += run_.status == "running" ? ": the recording ends here (the run never finished)" : ": " + run_.status;
    }
    return s;
}

WorkerUpdate ReplaySource::workers_at(Job& j, std::int64_t position, const std::vector<IterationRecord>& rows) const
{
    const int count = static_cast<int>(j.workers.size());
    const JobFold fold = fold_at(j, position);
    const std::vector<WorkerHold>& holds = fold.holds();
    WorkerUpdate update { j.info.id, {}, replay_ };
    for (int i = 0; i < count; ++i) {
        WorkerState w;
        w.worker = j.workers[static_cast<std::size_t>(i)].id;
        w.name = j.workers[static_cast<std::size_t>(i)].name;
        w.device = j.devices[static_cast<std::size_t>(i)].device;
        w.sms = j.devices[static_cast<std::size_t>(i)].sms;
        for (const IterationRecord& r : rows)
            if (r.worker == w.worker)
                w.batch_size = r.batch_size;
        const WorkerHold& h = holds[static_cast<std::size_t>(i)];
        if (h.pinned)
            w.pinned = w.batch_size;
        w.excluded = h.excluded;
        w.excluded_until = h.excluded_until;
        w.slowdown = h.slowdown;
        update.workers.push_back(std::move(w));
    }
    return update;
}

std::vector<ServerMessage> ReplaySource::step(std::int64_t index)
{
    const db::IterationMark& m = mark(index);
    std::vector<ServerMessage> out;
    std::vector<ServerMessage> after_rows;
    const auto [first_event, last_event] = due_range(event_due_, index);
    for (std::size_t i = first_event; i < last_event; ++i)
        (event_due_[i].at_barrier ? after_rows : out).push_back(Event { events_[i], replay_ });
    const auto [first_evaluation, last_evaluation] = due_range(evaluation_due_, index);
    for (std::size_t i = first_evaluation; i < last_evaluation; ++i)
        (evaluation_due_[i].at_barrier ? after_rows : out).push_back(Evaluation { evaluations_[i], replay_ });
    const auto [first_cluster, last_cluster] = due_range(cluster_due_, index);
    for (std::size_t i = first_cluster; i < last_cluster; ++i)
        (cluster_due_[i].at_barrier ? after_rows : out).push_back(clusters_[i]);
    std::vector<IterationRecord> rows = rows_of(m.job, m.iteration);
    Job& j = job(m.job);
    WorkerUpdate workers = workers_at(j, index + 1, rows);
    out.push_back(IterationRows { m.job, m.iteration, std::move(rows), replay_ });
    std::move(after_rows.begin(), after_rows.end(), std::back_inserter(out));
    out.push_back(std::move(workers));
    out.push_back(JobUpdate { status_at(j, index + 1, false), replay_ });
    return out;
}

std::vector<ServerMessage> ReplaySource::finish()
{
    std::vector<ServerMessage> out;
    const auto [first_event, last_event] = due_range(event_due_, length());
    for (std::size_t i = first_event; i < last_event; ++i)
        out.push_back(Event { events_[i], replay_ });
    const auto [first_evaluation, last_evaluation] = due_range(evaluation_due_, length());
    for (std::size_t i = first_evaluation; i < last_evaluation; ++i)
        out.push_back(Evaluation { evaluations_[i], replay_ });
    const auto [first_cluster, last_cluster] = due_range(cluster_due_, length());
    for (std::size_t i = first_cluster; i < last_cluster; ++i)
        out.push_back(clusters_[i]);
    for (auto& [id, j] : jobs_)
        out.push_back(JobUpdate { status_at(*j, length(), true), replay_ });
    return out;
}

std::vector<ServerMessage> ReplaySource::snapshot(std::int64_t position)
{
    position = std::clamp<std::int64_t>(position, 0, length());
    std::vector<ServerMessage> out;
    // The cluster as of the position: the last state delivered before it.
    const auto delivered = std::lower_bound(
        cluster_due_.begin(), cluster_due_.end(), position, [](const Due& d, std::int64_t p) { return d.step < p; });
    if (delivered != cluster_due_.begin())
        out.push_back(clusters_[static_cast<std::size_t>(delivered - cluster_due_.begin()) - 1]);
    for (auto& [id, j] : jobs_) {
        const auto last = std::lower_bound(j->steps.begin(), j->steps.end(), position);
        std::vector<IterationRecord> rows;
        if (last != j->steps.begin())
            rows = rows_of(id, mark(*(last - 1)).iteration);
        out.push_back(JobUpdate { status_at(*j, position, false), replay_ });
        out.push_back(workers_at(*j, position, rows));
        if (!rows.empty()) {
            const std::int64_t iteration = rows.front().iteration;
            out.push_back(IterationRows { id, iteration, std::move(rows), replay_ });
        }
    }
    return out;
}

ReplayState ReplaySource::state(std::int64_t position, ReplayPhase phase, double speed, bool seeked) const
{
    ReplayState s;
    s.replay = replay_;
    s.database = database_name_;
    s.run = run_.id;
    s.state = phase;
    s.speed = speed;
    s.position = position;
    s.length = length();
    if (position > 0) {
        const db::IterationMark& m = mark(std::min(position, length()) - 1);
        s.job = m.job;
        s.iteration = m.iteration;
        s.time_s = m.end_s;
    } else {
        s.job = first_job();
    }
    s.end_time_s = end_time_s();
    s.seeked = seeked;
    return s;
}

} // namespace fulcrum::replay
