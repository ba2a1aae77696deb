#pragma once

#include "protocol/messages.h"
#include "ui/models/events_model.h"
#include "ui/models/iteration_history.h"
#include "ui/models/jobs_model.h"
#include "ui/models/workers_model.h"

#include <QElapsedTimer>
#include <QObject>
#include <deque>
#include <map>
#include <optional>

namespace fulcrum::ui {

// The console's one ingest path: every server message, live or replayed, goes through
// ingest() into the item models and histories the views read. It follows one source at a
// time (the live stream, or one replay); messages of another source are ignored.
class ConsoleStore : public QObject {
    Q_OBJECT
public:
    // `history_capacity`: iterations kept per worker of each job (the charts' and the
    // timeline's reach); `histories`: jobs whose history is kept at once.
    explicit ConsoleStore(std::size_t history_capacity = 10000, std::size_t histories = 8, QObject* parent = nullptr);

    // 0: the live stream; otherwise a replay's id. Clears the models for the replay; the live
    // state is set aside meanwhile and kept up to date from the live stream, which goes on, so
    // going back to live shows it as it would have been (issue 44 item 2: the finished jobs'
    // charts and events came back empty).
    void follow(std::int64_t replay);
    // The live stream stopped while replaying (a run file replayed by a local fulcrumd in its
    // place): what was set aside is out of date, and the live server's snapshot refills.
    void drop_live_aside() { live_aside_.reset(); }
    // Another server: nothing of the last one stays (its jobs, whose ids the new server's may
    // repeat, its cluster, its capabilities); the new server's snapshot fills the store.
    void forget_server();
    std::int64_t source() const { return source_; }
    bool replaying() const { return source_ != 0; }
    void ingest(const protocol::ServerMessage& message);
    // A replay fast-forwarding to a moment: iterations and events after `time_s` are not
    // taken in (the seek that ends the move would drop them again), so they do not push the
    // oldest iterations out of the histories. Unset: everything is taken in. follow() unsets it.
    void hold_after(std::optional<double> time_s) { hold_after_ = time_s; }

    // The job the workers table, the charts and the timeline show.
    std::optional<JobId> shown_job() const { return workers_.job(); }
    void show_job(JobId job);

    JobsModel& jobs() { return jobs_; }
    const JobsModel& jobs() const { return jobs_; }
    WorkersModel& workers() { return workers_; }
    EventsModel& events() { return events_; }
    const protocol::ReplayState* replay_state() const { return replay_state_ ? &*replay_state_ : nullptr; }
    // The cluster of the source followed: live, fulcrumd's now; in a replay, the one the run's
    // job ran on as recorded (none before the first recorded state, or in a run that has none).
    const protocol::ClusterState* cluster() const { return cluster_ ? &*cluster_ : nullptr; }
    // The cluster over time, a moment per change: live, in seconds since the console began to
    // follow the live stream; in a replay, on the run's clock (seeking back drops the later
    // ones). At most the last 10,000.
    struct ClusterMoment {
        double seconds = 0;
        protocol::ClusterState cluster;
    };
    const std::deque<ClusterMoment>& cluster_timeline() const { return cluster_timeline_; }
    // Now on the timeline's clock: the replay's position, or seconds since following live.
    double cluster_now() const;
    // What the server offers (list-capabilities); null until it answered.
    const protocol::Capabilities* capabilities() const { return capabilities_ ? &*capabilities_ : nullptr; }
    const protocol::WorkerState* worker_state(JobId job, WorkerId worker) const;
    // The iteration, evaluation and event frames fulcrumd dropped for this console since it
    // began to follow this server, because it fell behind (`missed`): the live charts have
    // gaps there, and marks may be missing; the run stores hold everything.
    std::int64_t dropped() const { return dropped_; }
    // The shown job's recent iterations (empty when none is shown).
    const JobHistory& history() const;
    const JobHistory* history(JobId job) const;

signals:
    void replayStateChanged();
    void clusterChanged();
    void capabilitiesChanged();
    // New iterations of the shown job arrived, or its history was cut back or replaced.
    void historyChanged();
    void shownJobChanged();
    void fellBehind(); // a `missed` that dropped frames, or dropped() back to 0 (another server)

private:
    JobHistory& history_for(JobId job);
    // Job `job`'s history in `histories`, made (room made first, sparing `shown`) if new.
    JobHistory& history_in(std::map<JobId, JobHistory>& histories, JobId job, std::optional<JobId> shown) const;
    // Live messages while a replay is shown: into the live state set aside.
    void keep_aside(const protocol::ServerMessage& message);
    struct LiveAside {
        std::vector<protocol::JobStatus> jobs;
        std::deque<EventRecord> events;
        std::map<JobId, JobHistory> histories;
        std::map<JobId, std::vector<protocol::WorkerState>> worker_states;
        std::map<JobId, protocol::IterationRows> last_rows;
        std::optional<JobId> shown;
    };
    void take_cluster(const protocol::ClusterState& cluster, double seconds);

    std::int64_t source_ = 0;
    std::optional<double> hold_after_;
    std::size_t history_capacity_, histories_;
    JobsModel jobs_;
    WorkersModel workers_;
    EventsModel events_;
    std::optional<protocol::ReplayState> replay_state_;
    std::optional<protocol::ClusterState> cluster_;
    std::optional<protocol::ClusterState> live_cluster_; // kept while a replay is followed
    std::deque<ClusterMoment> cluster_timeline_;
    QElapsedTimer live_clock_; // since the live stream was followed
    std::optional<protocol::Capabilities> capabilities_;
    std::int64_t dropped_ = 0;
    std::map<JobId, std::vector<protocol::WorkerState>> worker_states_;
    std::map<JobId, protocol::IterationRows> last_rows_; // each job's newest iteration
    std::map<JobId, JobHistory> job_histories_;
    std::optional<LiveAside> live_aside_; // while a replay is shown
    JobHistory empty_;
};

} // namespace fulcrum::ui
