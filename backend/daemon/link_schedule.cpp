#include "daemon/link_schedule.h"

#include "daemon/shared_clock.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace fulcrum::daemon {

namespace {
// A transfer that ends within this of an instant is over at it: a held job asks again at the
// end it was told, which its own clock's offset may round a hair earlier.
constexpr double kTick = 1e-9;
} // namespace

// The links as a communication policy sees them at one instant.
class LinkSchedule::LinksAt final : public sched::LinkState {
public:
    LinksAt(const std::vector<Running>& running, double at)
        : running_(running)
        , at_(at)
    {
    }

    int tasks_on(int server) const override
    {
        return static_cast<int>(
            std::count_if(running_.begin(), running_.end(), [&](const Running& r) { return on(r, server); }));
    }

    double remaining_bytes_of_sole_task(int server) const override
    {
        for (const Running& r : running_)
            if (on(r, server))
                return r.end > r.start ? r.bytes * (r.end - at_) / (r.end - r.start) : 0.0;
        return 0;
    }

private:
    bool on(const Running& r, int server) const
    {
        return r.start <= at_ + kTick && at_ + kTick < r.end
            && std::find(r.servers.begin(), r.servers.end(), server) != r.servers.end();
    }

    const std::vector<Running>& running_;
    double at_;
};

double SteadyWallTime::now_s() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
}

bool SteadyWallTime::sleep_until(double until, const std::atomic<bool>* stop)
{
    // In slices, so that a stop is seen within a few milliseconds.
    for (double now = now_s(); now < until; now = now_s()) {
        if (stop && stop->load())
            return false;
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.005, until - now)));
    }
    return true;
}

LinkSchedule::LinkSchedule(sched::ClusterSpec cluster, const std::string& policy, WallTime* wall)
    : cluster_(std::move(cluster))
    , wall_(wall ? *wall : steady_)
{
    set_policy(policy);
}

std::unique_ptr<sched::CommPolicy> LinkSchedule::make_policy(
    const std::string& policy, const sched::ContentionModel& link)
{
    return sched::make_comm_policy(policy, link); // null for none
}

void LinkSchedule::check_policy(const std::string& policy)
{
    make_policy(policy, {});
}

void LinkSchedule::set_policy(const std::string& policy)
{
    std::unique_ptr<sched::CommPolicy> made = make_policy(policy, cluster_.network);
    std::lock_guard lock(mutex_);
    policy_ = std::move(made);
    name_ = policy_ ? policy_->name() : kNone;
}

std::string LinkSchedule::policy() const
{
    std::lock_guard lock(mutex_);
    return name_;
}

bool LinkSchedule::scheduling() const
{
    std::lock_guard lock(mutex_);
    return policy_ != nullptr;
}

std::optional<int> LinkSchedule::server_of(int gpu) const
{
    if (gpu == kDaemonHost) // fulcrumd's host: the link past the cluster's servers
        return std::max(0, cluster_.servers);
    if (gpu < 0 || cluster_.gpus_per_server <= 0)
        return std::nullopt;
    return gpu / cluster_.gpus_per_server;
}

std::vector<int> LinkSchedule::servers_of(const std::vector<int>& gpus) const
{
    std::vector<int> servers;
    for (const int g : gpus)
        if (const std::optional<int> s = server_of(g))
            servers.push_back(*s);
    std::sort(servers.begin(), servers.end());
    servers.erase(std::unique(servers.begin(), servers.end()), servers.end());
    return servers;
}

LinkSchedule::Decision LinkSchedule::try_start(const Transfer& transfer, double at)
{
    std::lock_guard lock(mutex_);
    return decide(running_, transfer, at);
}

LinkSchedule::Decision LinkSchedule::decide(std::vector<Running>& running, const Transfer& transfer, double at)
{
    // Calls come in the timeline's order: what ended by now is over for every later call.
    std::erase_if(running, [at](const Running& r) { return r.end <= at + kTick; });
    const std::vector<int> servers = servers_of(transfer.gpus);
    const LinksAt links(running, at);
    Decision d;
    if (policy_ && !servers.empty() && !policy_->admit(transfer.bytes, servers, links)) {
        // Held until a transfer on one of its links ends; the policy is asked again then.
        d.retry_at = std::numeric_limits<double>::infinity();
        for (const Running& r : running)
            for (const int s : servers)
                if (r.start <= at + kTick && std::find(r.servers.begin(), r.servers.end(), s) != r.servers.end())
                    d.retry_at = std::min(d.retry_at, r.end);
        if (d.retry_at > at + kTick && d.retry_at < std::numeric_limits<double>::infinity())
            return d;
        // A policy that holds a transfer on idle links would hold it forever: it starts.
    }
    d.started = true;
    double length = 0;
    for (std::size_t w = 0; w < transfer.gpus.size(); ++w) {
        const std::optional<int> server = server_of(transfer.gpus[w]);
        const int k = server ? links.tasks_on(*server) + 1 : 1;
        d.stretch.push_back(cluster_.network.stretch(transfer.bytes, k));
        if (w < transfer.alone_s.size())
            length = std::max(length, transfer.alone_s[w] * d.stretch.back());
    }
    if (!servers.empty() && length > 0)
        running.push_back({ transfer.job, servers, transfer.bytes, at, at + length });
    return d;
}

bool LinkSchedule::srsf_before_due(const Asking& a, double at) const
{
    const auto key = [](const Asking& x) { return std::tuple(x.service, x.job, x.id); };
    return std::any_of(paced_asking_.begin(), paced_asking_.end(), [&](const Asking& other) {
        return other.id != a.id && other.due <= at + kTick && key(other) < key(a)
            && std::find_first_of(other.servers.begin(), other.servers.end(), a.servers.begin(), a.servers.end())
            != other.servers.end();
    });
}

LinkSchedule::Scheduled LinkSchedule::schedule_paced(
    const Transfer& transfer, double pace, double service, const std::atomic<bool>* stop)
{
    Transfer in_wall = transfer; // the link is busy for the transfer's run seconds over the pace
    for (double& s : in_wall.alone_s)
        s /= pace;
    Scheduled out;
    const double asked = wall_.now_s();
    const auto stopped = [&] {
        out.wait_s = (wall_.now_s() - asked) * pace;
        out.stretch.assign(transfer.gpus.size(), 1.0);
        return out;
    };
    std::uint64_t id = 0;
    {
        std::lock_guard lock(mutex_);
        id = next_asking_++;
        paced_asking_.push_back({ id, transfer.job, servers_of(transfer.gpus), service, asked });
    }
    struct Leave { // however it ends: started, stopped, or thrown
        LinkSchedule& links;
        std::uint64_t id;
        ~Leave()
        {
            {
                std::lock_guard lock(links.mutex_);
                std::erase_if(links.paced_asking_, [this](const Asking& a) { return a.id == id; });
            }
            links.asked_.notify_all();
        }
    } leave { *this, id };
    const auto mine = [this, id] {
        return std::find_if(paced_asking_.begin(), paced_asking_.end(), [id](const Asking& a) { return a.id == id; });
    };
    for (double due = asked;;) {
        if (!wall_.sleep_until(due, stop))
            return stopped();
        Decision d;
        double at = 0;
        {
            std::unique_lock lock(mutex_);
            // Those before it in SRSF order ask first: each one's asking wakes the others.
            while (srsf_before_due(*mine(), wall_.now_s())) {
                if (stop && stop->load()) {
                    lock.unlock();
                    return stopped();
                }
                asked_.wait_for(lock, std::chrono::milliseconds(5));
            }
            at = wall_.now_s();
            d = decide(paced_running_, in_wall, at);
            mine()->due = d.started ? at : d.retry_at;
        }
        asked_.notify_all();
        ++out.asked;
        if (d.started) {
            out.started = true;
            out.wait_s = (at - asked) * pace;
            out.stretch = std::move(d.stretch);
            return out;
        }
        due = d.retry_at;
    }
}

LinkSchedule::Scheduled LinkSchedule::schedule(
    SharedVirtualClock& clock, const Transfer& transfer, double t, double service, const std::atomic<bool>* stop)
{
    Scheduled out;
    for (double asked_at = t;;) {
        Decision d;
        double at = 0;
        // Decided while no other job moves: jobs let go at one instant ask in the clock's order.
        if (!clock.decide(transfer.job, asked_at, service, stop, [&](double now) {
                at = now;
                d = try_start(transfer, now);
            })) {
            out.wait_s = asked_at - t;
            out.stretch.assign(transfer.gpus.size(), 1.0);
            return out;
        }
        ++out.asked;
        if (d.started) {
            out.started = true;
            out.wait_s = asked_at - t;
            out.stretch = std::move(d.stretch);
            return out;
        }
        asked_at += d.retry_at - at;
    }
}

std::vector<int> LinkSchedule::transfers_on_links(double at) const
{
    std::lock_guard lock(mutex_);
    const LinksAt links(running_, at);
    std::vector<int> out;
    out.reserve(static_cast<std::size_t>(std::max(0, cluster_.servers)));
    for (int s = 0; s < cluster_.servers; ++s)
        out.push_back(links.tasks_on(s));
    return out;
}

} // namespace fulcrum::daemon
