#pragma once

#include "access/tenancy.h"
#include "protocol/messages.h"
#include "serve/io_path.h"
#include "serve/send_queue.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::serve {

// A WebSocket close frame carries at most 123 bytes of reason (RFC 6455, 5.5): a longer one
// is cut at the start of a UTF-8 character and ends in "..." (Beast throws on a longer one,
// and in a handler that ended fulcrumd).
inline constexpr std::size_t kCloseReasonBytes = 123;
std::string close_reason_that_fits(std::string reason);

class Client;

// Where a worker connection's binary frames go: the remote slots it computes for (a job's
// RemotePool, in the daemon), which tell the connection themselves, so that a result frame
// reaches its job without a lookup in the job queue.
class ResultSink {
public:
    // False (with `error`) when the frame is not a result this sink waits for.
    virtual bool deliver(const Client& client, std::string_view frame, std::string* error) = 0;

protected:
    ResultSink() = default;
    ResultSink(const ResultSink&) = default;
    ResultSink& operator=(const ResultSink&) = default;
    ~ResultSink() = default;
};

// One connected client as fulcrumd sees it, whatever carries its frames: its role, its
// name for the operator log, its subscriptions and its bounded send queue. The transport
// sets `wake` to start writing when the queue stops being empty. Its state is atomics and
// published snapshots: the trainers that publish to it and its own frame handlers never wait
// for each other (only its send queue, a hand-off, has a lock).
class Client : public std::enable_shared_from_this<Client> {
public:
    Client(std::uint64_t id, protocol::Role role, std::string name, std::size_t queue_limit);

    std::uint64_t id() const { return id_; }
    protocol::Role role() const { return role_; }
    const std::string& name() const { return name_; }
    // Who holds the token this client came in with, when the token file names them.
    const std::string& person() const { return person_; }
    void set_person(std::string person) { person_ = std::move(person); }
    // The tenants whose jobs its token reaches (set before the client is shared).
    const access::TenantReach& reach() const { return reach_; }
    void set_reach(access::TenantReach reach) { reach_ = std::move(reach); }
    SendQueue& queue() { return queue_; }

    // What this client asked for: replies, snapshots, its replays. Never dropped.
    void send(const protocol::ServerMessage& message, Delivery delivery = Delivery::Always);
    // Stream frames (droppable under backpressure, or coalesced by key); Always for what
    // must arrive, such as a remote worker's task.
    void send_frame(Frame frame, std::string coalesce_key = {}, Delivery delivery = Delivery::Droppable);
    void set_wake(std::function<void()> wake);
    // Applied to every error message and job status text this client is sent (fulcrumd writes
    // its folders as their roles): whatever a library's error names, no server path leaves.
    void set_text_filter(std::function<std::string(std::string)> filter) { filter_ = std::move(filter); }

    bool greeted() const;
    void set_greeted(int version = protocol::kProtocolVersion);
    int version() const; // the protocol version its hello said
    void subscribe(const protocol::Subscribe& subscription);
    bool unsubscribe(const std::string& id);
    // Whether a message of this stream and job is wanted, and the worker filter to apply to
    // iteration rows (empty: all workers).
    bool wants(protocol::Stream stream, JobId job, std::vector<WorkerId>* workers = nullptr) const;

    // The remote slots this worker connection computes for (joined, or given it from the
    // worker pool), set by those slots: its result frames go there directly, without the job
    // queue.
    std::shared_ptr<ResultSink> results_to() const { return results_to_.load().lock(); }
    void set_results_to(std::weak_ptr<ResultSink> sink) { results_to_.store(std::move(sink)); }

    // When this connection last sent a frame, a heartbeat included: a remote worker silent
    // for its job's worker timeout is lost. Marked by the I/O threads.
    void heard() { last_heard_.store(std::chrono::steady_clock::now().time_since_epoch().count()); }
    // A heartbeat came from it: its silence means a stopped or hung process (to a job's rank
    // pool). One that says `evaluating`, and the one after it that does not, mark when the rank
    // last evaluated: an announced evaluation does not count against external.rank_timeout_s.
    // One that says `collective` says the rank waits in its framework's all-reduce.
    void heard_heartbeat(bool evaluating, bool collective);
    bool sends_heartbeats() const { return sends_heartbeats_.load(); }
    bool evaluating() const { return evaluating_.load(); }
    bool in_collective() const { return collective_.load(); }
    std::chrono::steady_clock::time_point collective_since() const // when it last said it entered one
    {
        return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(collective_since_.load()));
    }
    std::chrono::steady_clock::time_point evaluating_since() const
    {
        return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(evaluating_since_.load()));
    }
    std::chrono::steady_clock::time_point evaluated_at() const
    {
        return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(evaluated_at_.load()));
    }
    std::chrono::steady_clock::time_point last_heard() const
    {
        return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(last_heard_.load()));
    }
    // Ends the connection with a close frame saying why; its session sets how.
    // The reason is cut to what a close frame carries (close_reason_that_fits).
    void close_for(const std::string& reason);
    void set_closer(std::function<void(const std::string&)> closer);

private:
    std::uint64_t id_;
    protocol::Role role_;
    std::string name_;
    std::string person_;
    access::TenantReach reach_;
    SendQueue queue_;
    std::atomic<std::shared_ptr<const std::function<void()>>> wake_;
    std::function<std::string(std::string)> filter_; // set before the client is shared
    std::atomic<bool> greeted_ { false };
    std::atomic<bool> sends_heartbeats_ { false };
    std::atomic<bool> evaluating_ { false };
    std::atomic<bool> collective_ { false };
    std::atomic<std::chrono::steady_clock::rep> collective_since_ { 0 };
    std::atomic<std::chrono::steady_clock::rep> evaluated_at_ { 0 };
    std::atomic<std::chrono::steady_clock::rep> evaluating_since_ { 0 };
    std::atomic<int> version_ { protocol::kProtocolVersion };
    using Subscriptions = std::map<std::string, protocol::Subscribe>;
    std::atomic<std::shared_ptr<const Subscriptions>> subscriptions_ { std::make_shared<const Subscriptions>() };
    std::atomic<std::weak_ptr<ResultSink>> results_to_;
    std::atomic<std::chrono::steady_clock::rep> last_heard_ {
        std::chrono::steady_clock::now().time_since_epoch().count()
    };
    std::atomic<std::shared_ptr<const std::function<void(const std::string&)>>> closer_;
};

// Fans the live stream out to the clients that subscribed to it. A message is encoded once
// and its frame shared; publishing only queues, so a stalled client never blocks the
// trainer that publishes. Thread-safe without a lock: the clients are a published snapshot,
// replaced when one connects or leaves.
class StreamHub {
public:
    void add(const std::shared_ptr<Client>& client);
    void remove(std::uint64_t client);
    std::size_t clients() const;
    // Frames dropped and coalesced for every client since the start, those gone included.
    protocol::Missed missed_totals() const;

    // Iteration rows, evaluations and events (never coalesced).
    void publish(const protocol::IterationRows& rows);
    void publish(const protocol::Evaluation& evaluation);
    void publish(const protocol::Event& event);
    // Latest-state messages, coalesced per job for a client that falls behind.
    void publish(const protocol::JobUpdate& status);
    void publish(const protocol::WorkerUpdate& workers);
    void publish(const protocol::ClusterUpdate& cluster); // to every cluster subscriber
    // The tenant a job belongs to: only clients whose token reaches it are sent its streams.
    // Set before the job publishes anything; a job never named here is the default tenant's.
    void set_tenant(JobId job, const std::string& tenant);
    std::string tenant_of(JobId job) const; // the default tenant for a job never named

private:
    std::vector<std::shared_ptr<Client>> subscribers(protocol::Stream stream, JobId job) const;
    void fan_out(protocol::Stream stream, JobId job, const protocol::ServerMessage& message, const std::string& key);

    // In connection order (ids grow): a vector, so that a connection copies pointers, not nodes.
    using Clients = std::vector<std::pair<std::uint64_t, std::weak_ptr<Client>>>;
    std::atomic<std::shared_ptr<const Clients>> clients_ { std::make_shared<const Clients>() };
    using Tenants = std::map<JobId, std::string>;
    std::atomic<std::shared_ptr<const Tenants>> tenants_ { std::make_shared<const Tenants>() };
    mutable std::mutex totals_; // a hand-off (IoPath): a departure's accounting, or a scrape's sum
    protocol::Missed gone_; // the totals of clients removed
};

} // namespace fulcrum::serve
