#include "ui/console_store.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace fulcrum::ui {

ConsoleStore::ConsoleStore(std::size_t history_capacity, std::size_t histories, QObject* parent)
    : QObject(parent)
    , history_capacity_(history_capacity)
    , histories_(std::max<std::size_t>(histories, 1))
    , empty_(1)
{
    live_clock_.start();
    events_.set_tenant_of([this](JobId job) {
        const protocol::JobStatus* status = jobs_.job(job);
        return status ? status->tenant : std::string();
    });
}

void ConsoleStore::follow(std::int64_t replay)
{
    if (source_ == 0 && replay != 0) { // the live state waits aside until the replay ends
        live_aside_ = LiveAside { jobs_.statuses(), events_.all(), std::move(job_histories_), std::move(worker_states_),
            std::move(last_rows_), workers_.job() };
    }
    std::optional<LiveAside> back;
    if (replay == 0 && source_ != 0)
        back = std::exchange(live_aside_, std::nullopt);
    source_ = replay;
    hold_after_.reset();
    jobs_.clear();
    workers_.clear();
    events_.clear();
    replay_state_.reset();
    worker_states_.clear();
    last_rows_.clear();
    job_histories_.clear();
    cluster_timeline_.clear();
    cluster_.reset();
    live_clock_.restart();
    if (replay == 0 && live_cluster_) // the live cluster as it stands, until the next change
        take_cluster(*live_cluster_, 0);
    if (back) {
        for (const protocol::JobStatus& s : back->jobs)
            jobs_.apply(s);
        for (const EventRecord& e : back->events)
            events_.append(e);
        job_histories_ = std::move(back->histories);
        worker_states_ = std::move(back->worker_states);
        last_rows_ = std::move(back->last_rows);
        if (back->shown)
            show_job(*back->shown);
    }
    emit shownJobChanged();
    emit historyChanged();
    emit replayStateChanged();
    emit clusterChanged();
}

void ConsoleStore::forget_server()
{
    live_cluster_.reset();
    capabilities_.reset();
    if (std::exchange(dropped_, 0) > 0)
        emit fellBehind(); // what was lost was the other server's
    live_aside_.reset();
    follow(0);
    emit capabilitiesChanged();
}

double ConsoleStore::cluster_now() const
{
    if (source_ != 0)
        return replay_state_ ? replay_state_->time_s : 0;
    return static_cast<double>(live_clock_.elapsed()) / 1000.0;
}

void ConsoleStore::take_cluster(const protocol::ClusterState& cluster, double seconds)
{
    cluster_ = cluster;
    // A replay's snapshot after a seek repeats the state the timeline already ends with.
    if (!cluster_timeline_.empty() && cluster_timeline_.back().cluster == cluster
        && cluster_timeline_.back().seconds <= seconds)
        return;
    cluster_timeline_.push_back({ seconds, cluster });
    while (cluster_timeline_.size() > 10000)
        cluster_timeline_.pop_front();
}

void ConsoleStore::show_job(JobId job)
{
    jobs_.mark_seen(job);
    if (workers_.job() == job)
        return;
    workers_.show_job(job);
    if (const auto it = worker_states_.find(job); it != worker_states_.end())
        workers_.apply(protocol::WorkerUpdate { job, it->second, source_ });
    if (const auto it = last_rows_.find(job); it != last_rows_.end())
        workers_.apply(it->second); // the table's latest-row columns
    emit shownJobChanged();
    emit historyChanged();
}

JobHistory& ConsoleStore::history_for(JobId job)
{
    return history_in(job_histories_, job, workers_.job());
}

JobHistory& ConsoleStore::history_in(
    std::map<JobId, JobHistory>& histories, JobId job, std::optional<JobId> shown) const
{
    if (const auto it = histories.find(job); it != histories.end())
        return it->second;
    if (histories.size() >= histories_) {
        // Make room by forgetting the oldest job not on screen; the run store keeps it.
        for (auto it = histories.begin(); it != histories.end(); ++it)
            if (it->first != shown) {
                histories.erase(it);
                break;
            }
    }
    return histories.try_emplace(job, history_capacity_).first->second;
}

const JobHistory& ConsoleStore::history() const
{
    const auto job = workers_.job();
    const JobHistory* h = job ? history(*job) : nullptr;
    return h ? *h : empty_;
}

const JobHistory* ConsoleStore::history(JobId job) const
{
    const auto it = job_histories_.find(job);
    return it == job_histories_.end() ? nullptr : &it->second;
}

const protocol::WorkerState* ConsoleStore::worker_state(JobId job, WorkerId worker) const
{
    const auto it = worker_states_.find(job);
    if (it == worker_states_.end())
        return nullptr;
    for (const protocol::WorkerState& s : it->second)
        if (s.worker == worker)
            return &s;
    return nullptr;
}

void ConsoleStore::keep_aside(const protocol::ServerMessage& message)
{
    using namespace protocol;
    LiveAside& a = *live_aside_;
    if (const auto* rows = std::get_if<IterationRows>(&message); rows && rows->replay == 0) {
        history_in(a.histories, rows->job, a.shown).append(*rows);
        a.last_rows[rows->job] = *rows;
    } else if (const auto* update = std::get_if<JobUpdate>(&message); update && update->replay == 0) {
        const auto known = std::find_if(
            a.jobs.begin(), a.jobs.end(), [&](const JobStatus& s) { return s.job == update->status.job; });
        if (known != a.jobs.end())
            *known = update->status;
        else
            a.jobs.push_back(update->status);
    } else if (const auto* workers = std::get_if<WorkerUpdate>(&message); workers && workers->replay == 0) {
        a.worker_states[workers->job] = workers->workers;
    } else if (const auto* event = std::get_if<Event>(&message); event && event->replay == 0) {
        a.events.push_back(event->event);
        if (a.events.size() > events_.limit())
            a.events.pop_front();
    }
}

void ConsoleStore::ingest(const protocol::ServerMessage& message)
{
    using namespace protocol;
    if (live_aside_ && source_ != 0)
        keep_aside(message);
    if (const auto* rows = std::get_if<IterationRows>(&message)) {
        if (rows->replay != source_ || (hold_after_ && barrier_s(*rows) > *hold_after_ + 1e-9))
            return;
        history_for(rows->job).append(*rows);
        last_rows_[rows->job] = *rows;
        workers_.apply(*rows);
        if (workers_.job() == rows->job)
            emit historyChanged();
        if (source_ != 0 && replay_state_) {
            // The replay's position is the last iteration delivered: the server states it
            // when it changes phase, so between two states the rows tell it (issue 44 item 3:
            // the bar read "iteration -1 of job 0 · 0.0 s" while the run played).
            replay_state_->job = rows->job;
            replay_state_->iteration = rows->iteration;
            replay_state_->time_s = std::max(replay_state_->time_s, barrier_s(*rows));
            replay_state_->position = std::min(replay_state_->length, replay_state_->position + 1);
            emit replayStateChanged();
        }
    } else if (const auto* update = std::get_if<JobUpdate>(&message)) {
        if (update->replay != source_)
            return;
        jobs_.apply(update->status);
        if (!workers_.job())
            show_job(update->status.job); // the first job, until the operator picks one
    } else if (const auto* workers = std::get_if<WorkerUpdate>(&message)) {
        if (workers->replay != source_)
            return;
        worker_states_[workers->job] = workers->workers;
        workers_.apply(*workers);
    } else if (const auto* event = std::get_if<Event>(&message)) {
        if (event->replay == source_ && !(hold_after_ && event->event.time_s > *hold_after_ + 1e-9))
            events_.append(event->event);
    } else if (const auto* state = std::get_if<ReplayState>(&message)) {
        if (state->replay != source_)
            return;
        replay_state_ = *state;
        if (state->seeked) {
            // Seeking back: what came after the new position is not part of the run yet. At
            // its start nothing is, not even what happened at time 0 (the job's queueing,
            // placement and start): the first step delivers those again (issue 44 item 1).
            const double kept_through = state->position > 0 ? state->time_s : -std::numeric_limits<double>::infinity();
            for (auto& [job, h] : job_histories_)
                h.truncate_after(kept_through);
            events_.truncate_after(kept_through);
            while (!cluster_timeline_.empty() && cluster_timeline_.back().seconds > kept_through + 1e-9)
                cluster_timeline_.pop_back();
            if (cluster_timeline_.empty())
                cluster_.reset();
            else
                cluster_ = cluster_timeline_.back().cluster;
            emit historyChanged();
            emit clusterChanged();
        }
        emit replayStateChanged();
    } else if (const auto* cluster = std::get_if<ClusterUpdate>(&message)) {
        if (cluster->replay == 0)
            live_cluster_ = cluster->cluster; // for when the console follows the live stream again
        if (cluster->replay != source_)
            return;
        const double seconds
            = cluster->replay ? cluster->time_s.value_or(0) : static_cast<double>(live_clock_.elapsed()) / 1000.0;
        if (hold_after_ && seconds > *hold_after_ + 1e-9)
            return;
        take_cluster(cluster->cluster, seconds);
        emit clusterChanged();
    } else if (const auto* reply = std::get_if<Reply>(&message); reply && reply->capabilities) {
        capabilities_ = *reply->capabilities;
        emit capabilitiesChanged();
    } else if (const auto* missed = std::get_if<Missed>(&message); missed && missed->dropped > 0) {
        dropped_ += missed->dropped; // coalesced states were only superseded: nothing is lost
        emit fellBehind();
    }
}

} // namespace fulcrum::ui
