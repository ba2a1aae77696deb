#include "ctl/worker_table.h"

#include <cstdio>
#include <set>

namespace fulcrum::ctl {

using namespace protocol;

namespace {

std::string format(const char* pattern, auto... values)
{
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, pattern, values...);
    return buffer;
}

std::string state_text(const WorkerState* s)
{
    if (!s)
        return "";
    std::string text;
    const auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (!s->member)
        add("not a member");
    if (s->excluded)
        add(s->excluded_until ? format("excluded until %.1f s", *s->excluded_until) : std::string("excluded"));
    if (s->pinned)
        add("pinned " + std::to_string(*s->pinned));
    if (s->slowdown != 1)
        add(format("straggler x%.2g", s->slowdown));
    if (s->stalled_since)
        add(format("stalled since %.1f s, predicted %.3g s", *s->stalled_since, s->predicted_s));
    return text;
}

} // namespace

bool WatchTable::apply(const ServerMessage& message)
{
    if (const auto* rows = std::get_if<IterationRows>(&message); rows && rows->replay == 0 && rows->job == job_) {
        for (const IterationRecord& r : rows->rows)
            last_rows_[r.worker] = r;
        if (rows->iteration != last_iteration_) { // a snapshot's rows may come again as the live delta
            last_iteration_ = rows->iteration;
            ++iterations_seen_;
        }
        return true;
    }
    if (const auto* update = std::get_if<JobUpdate>(&message);
        update && update->replay == 0 && update->status.job == job_) {
        status_ = update->status;
        return true;
    }
    if (const auto* workers = std::get_if<WorkerUpdate>(&message);
        workers && workers->replay == 0 && workers->job == job_) {
        for (const WorkerState& w : workers->workers)
            states_[w.worker] = w;
        return true;
    }
    return false;
}

bool WatchTable::ended() const
{
    return status_
        && (status_->state == JobState::Finished || status_->state == JobState::Stopped
            || status_->state == JobState::Failed);
}

std::string WatchTable::render() const
{
    std::string out;
    if (status_) {
        const JobStatus& s = *status_;
        out += format("job %lld (%s) %s, iteration %lld/%lld, %s, %s, run clock %.1f s", static_cast<long long>(s.job),
            s.name.c_str(), std::string(to_string(s.state)).c_str(), static_cast<long long>(s.iteration),
            static_cast<long long>(s.iterations), s.sync_model.c_str(), s.policy.c_str(), s.time_s);
        if (s.accuracy)
            out += format(", accuracy %.3f", *s.accuracy);
        if (!s.message.empty())
            out += " (" + s.message + ")";
        out += "\n";
    } else {
        out += "job " + std::to_string(job_) + "\n";
    }
    out += format("%6s  %-14s %6s %10s %10s %9s %8s %6s  %s\n", "worker", "name", "batch", "speed/s", "predicted",
        "compute s", "wait s", "wait", "state");
    std::set<WorkerId> workers;
    for (const auto& [w, row] : last_rows_)
        workers.insert(w);
    for (const auto& [w, state] : states_)
        workers.insert(w);
    for (const WorkerId w : workers) {
        const auto row = last_rows_.find(w);
        const auto state = states_.find(w);
        const WorkerState* s = state == states_.end() ? nullptr : &state->second;
        const std::string name = s ? s->name : "";
        if (row == last_rows_.end()) {
            out += format("%6d  %-14s %6s %10s %10s %9s %8s %6s  %s\n", static_cast<int>(w), name.c_str(), "-", "-",
                "-", "-", "-", "-", state_text(s).c_str());
            continue;
        }
        const IterationRecord& r = row->second;
        const double iteration_s = r.end_s - r.start_s + r.wait_s; // pull, compute, push, then the barrier
        const std::string predicted = r.predicted_speed ? format("%.1f", *r.predicted_speed) : std::string("-");
        out += format("%6d  %-14s %6d %10.1f %10s %9.3f %8.3f %5.0f%%  %s\n", static_cast<int>(w), name.c_str(),
            static_cast<int>(r.batch_size), r.speed, predicted.c_str(), r.compute_s, r.wait_s,
            iteration_s > 0 ? 100 * r.wait_s / iteration_s : 0.0, state_text(s).c_str());
    }
    return out;
}

} // namespace fulcrum::ctl
