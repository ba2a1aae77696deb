#include "archive/replay_session.h"

#include "common/error.h"
#include "replay/replay_source.h"
#include "serve/stream_hub.h"
#include "serve/thread_role.h"

#include <algorithm>

namespace fulcrum::archive {

using namespace protocol;
using serve::Client;

ReplaySession::ReplaySession(std::int64_t id, std::shared_ptr<Client> client, const std::filesystem::path& database,
    std::string database_name, const OpenReplay& open)
    : id_(id)
    , client_(std::move(client))
    , source_(std::make_unique<replay::ReplaySource>(database, open.run, id, std::move(database_name)))
    , playing_(!open.paused)
    , speed_(open.speed)
{
    // Before anything else is read or said of the run: another tenant's is refused as a whole.
    if (const std::string owner = tenant(); !client_->reach().covers(owner))
        throw RefusedRequest("not-authorized",
            "run " + std::to_string(open.run) + " of " + open.database + " belongs to tenant '" + owner + "'; this "
                + std::string(to_string(client_->role())) + " token reaches " + client_->reach().describe());
    if (open.from_iteration) {
        const auto position = source_->position_after(source_->first_job(), *open.from_iteration);
        if (!position)
            throw RefusedRequest("no-such-iteration",
                "run " + std::to_string(open.run) + " has no iteration " + std::to_string(*open.from_iteration)
                    + " of job " + std::to_string(source_->first_job()));
        position_ = *position;
    }
    // The opening snapshot goes out first, ended by snapshot-end with the open request's id.
    commands_.push_back(
        ReplayCommand { open.id, ReplayAction::Seek, id, std::nullopt, std::nullopt, std::nullopt, speed_ });
}

ReplaySession::~ReplaySession()
{
    {
        // Through the queue, so the client hears that the replay closed.
        std::lock_guard lock(mutex_);
        if (!closing_)
            commands_.push_back(
                ReplayCommand { "", ReplayAction::Close, id_, std::nullopt, std::nullopt, std::nullopt, speed_ });
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

void ReplaySession::start(const std::function<void()>& first)
{
    std::lock_guard lock(mutex_); // run() begins by taking it
    thread_ = std::thread([this] {
        // It paces a client's stream: at fulcrumd's priority, as the live streams are.
        serve::take_role(serve::ThreadRole::replay);
        run();
    });
    first();
}

std::string ReplaySession::tenant() const
{
    return access::recorded_tenant(source_->run().tenant);
}

std::uint64_t ReplaySession::client() const
{
    return client_->id();
}

void ReplaySession::check(const ReplayCommand& command) const
{
    if (command.action == ReplayAction::Seek && command.iteration) {
        const JobId job = command.job.value_or(source_->first_job());
        if (!source_->position_after(job, *command.iteration))
            throw RefusedRequest("no-such-iteration",
                "replay " + std::to_string(id_) + " has no iteration " + std::to_string(*command.iteration) + " of job "
                    + std::to_string(job));
    }
}

void ReplaySession::command(const ReplayCommand& command)
{
    {
        std::lock_guard lock(mutex_);
        commands_.push_back(command);
    }
    wake_.notify_all();
}

bool ReplaySession::closed() const
{
    std::lock_guard lock(mutex_);
    return closing_;
}

void ReplaySession::send_all(const std::vector<ServerMessage>& messages)
{
    for (const ServerMessage& m : messages)
        client_->send(m);
}

ReplayPhase ReplaySession::phase() const
{
    if (closing_)
        return ReplayPhase::Closed;
    if (position_ >= source_->length())
        return ReplayPhase::Finished;
    return playing_ ? ReplayPhase::Playing : ReplayPhase::Paused;
}

void ReplaySession::send_state(bool seeked)
{
    client_->send(source_->state(position_, phase(), speed_, seeked));
}

void ReplaySession::anchor()
{
    anchor_wall_ = std::chrono::steady_clock::now();
    anchor_time_ = source_->time_at(position_);
}

void ReplaySession::apply(const ReplayCommand& c)
{
    switch (c.action) {
    case ReplayAction::Play:
        playing_ = true;
        anchor();
        send_state(false);
        break;
    case ReplayAction::Pause:
        playing_ = false;
        send_state(false);
        break;
    case ReplayAction::SetSpeed:
        speed_ = c.speed;
        anchor();
        send_state(false);
        break;
    case ReplayAction::Seek:
        if (c.iteration)
            position_ = *source_->position_after(c.job.value_or(source_->first_job()), *c.iteration);
        else if (c.time_s)
            position_ = source_->position_at_time(*c.time_s);
        anchor();
        send_state(true);
        send_all(source_->snapshot(position_));
        client_->send(SnapshotEnd { c.id });
        finished_sent_ = false;
        break;
    case ReplayAction::Close:
        closing_ = true;
        send_state(false);
        break;
    }
}

void ReplaySession::run()
{
    // Keeps the client's queue at most half full, so replay frames are never dropped and
    // live frames still have room.
    const std::size_t room = std::max<std::size_t>(client_->queue().limit() / 2, 1);
    std::unique_lock lock(mutex_);
    while (!closing_) {
        if (!commands_.empty()) {
            const ReplayCommand c = commands_.front();
            commands_.pop_front();
            try {
                apply(c);
            } catch (const std::exception& e) {
                client_->send(
                    ProtocolError { { "replay-failed", "replay " + std::to_string(id_) + ": " + e.what(), "" } });
                closing_ = true;
            }
            continue;
        }
        if (!playing_ || position_ >= source_->length()) {
            if (position_ >= source_->length() && !finished_sent_) {
                send_all(source_->finish());
                finished_sent_ = true;
                send_state(false);
            }
            wake_.wait(lock);
            continue;
        }
        if (speed_ > 0) {
            const auto due = anchor_wall_
                + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>((source_->mark(position_).end_s - anchor_time_) / speed_));
            if (std::chrono::steady_clock::now() < due) {
                wake_.wait_until(lock, due);
                continue;
            }
        }
        if (client_->queue().size() >= room) {
            wake_.wait_for(lock, std::chrono::milliseconds(2));
            continue;
        }
        try {
            send_all(source_->step(position_));
        } catch (const std::exception& e) {
            client_->send(ProtocolError { { "replay-failed", "replay " + std::to_string(id_) + ": " + e.what(), "" } });
            closing_ = true;
            continue;
        }
        ++position_;
    }
}

} // namespace fulcrum::archive
