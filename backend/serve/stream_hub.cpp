#include "serve/stream_hub.h"

#include "protocol/codec.h"

#include <algorithm>

namespace fulcrum::serve {

Client::Client(std::uint64_t id, protocol::Role role, std::string name, std::size_t queue_limit)
    : id_(id)
    , role_(role)
    , name_(std::move(name))
    , queue_(queue_limit)
{
}

void Client::send(const protocol::ServerMessage& message, Delivery delivery)
{
    const auto* reply = std::get_if<protocol::Reply>(&message);
    const auto* problem = std::get_if<protocol::ProtocolError>(&message);
    if (!filter_ || (!problem && (!reply || (!reply->error && reply->jobs.empty())))) {
        send_frame(std::make_shared<const std::string>(protocol::encode(message)), {}, delivery);
        return;
    }
    protocol::ServerMessage filtered = message;
    if (auto* r = std::get_if<protocol::Reply>(&filtered)) {
        if (r->error)
            r->error->message = filter_(std::move(r->error->message));
        for (protocol::JobStatus& job : r->jobs)
            job.message = filter_(std::move(job.message));
    } else if (auto* p = std::get_if<protocol::ProtocolError>(&filtered)) {
        p->error.message = filter_(std::move(p->error.message));
    }
    send_frame(std::make_shared<const std::string>(protocol::encode(filtered)), {}, delivery);
}

void Client::send_frame(Frame frame, std::string coalesce_key, Delivery delivery)
{
    if (!queue_.push(std::move(frame), std::move(coalesce_key), delivery))
        return;
    if (const auto wake = wake_.load())
        (*wake)();
}

// An empty function (the session ended) is stored as none, so that nothing calls it.
void Client::set_wake(std::function<void()> wake)
{
    wake_.store(wake ? std::make_shared<const std::function<void()>>(std::move(wake)) : nullptr);
}

void Client::set_closer(std::function<void(const std::string&)> closer)
{
    closer_.store(
        closer ? std::make_shared<const std::function<void(const std::string&)>>(std::move(closer)) : nullptr);
}

std::string close_reason_that_fits(std::string reason)
{
    if (reason.size() <= kCloseReasonBytes)
        return reason;
    std::size_t cut = kCloseReasonBytes - 3;
    while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) // not inside a character
        --cut;
    reason.resize(cut);
    return reason + "...";
}

void Client::heard_heartbeat(bool evaluating, bool collective)
{
    sends_heartbeats_.store(true);
    if (collective && !collective_.load()) // before collective_: a reader that sees it in one sees since when
        collective_since_.store(std::chrono::steady_clock::now().time_since_epoch().count());
    collective_.store(collective);
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    if (evaluating && !evaluating_.load())
        evaluating_since_.store(now); // before evaluating_: a reader that sees it evaluating sees since when
    if (evaluating || evaluating_.load())
        evaluated_at_.store(now);
    evaluating_.store(evaluating);
}

void Client::close_for(const std::string& reason)
{
    if (const auto closer = closer_.load())
        (*closer)(close_reason_that_fits(reason));
}

bool Client::greeted() const
{
    return greeted_.load();
}

void Client::set_greeted(int version)
{
    version_.store(version); // before greeted_: a reader that sees it greeted sees its version
    greeted_.store(true);
}

int Client::version() const
{
    return version_.load();
}

void Client::subscribe(const protocol::Subscribe& subscription)
{
    copy_on_write(subscriptions_, [&](Subscriptions& s) {
        s[subscription.id] = subscription;
        return true;
    });
}

bool Client::unsubscribe(const std::string& id)
{
    return copy_on_write(subscriptions_, [&](Subscriptions& s) { return s.erase(id) > 0; });
}

bool Client::wants(protocol::Stream stream, JobId job, std::vector<WorkerId>* workers) const
{
    const std::shared_ptr<const Subscriptions> subscriptions = subscriptions_.load();
    bool wanted = false;
    bool all_workers = false;
    for (const auto& [id, s] : *subscriptions) {
        if (s.job && *s.job != job && stream != protocol::Stream::Cluster)
            continue;
        if (!s.streams.empty() && std::find(s.streams.begin(), s.streams.end(), stream) == s.streams.end())
            continue;
        wanted = true;
        if (s.workers.empty())
            all_workers = true;
        else if (workers)
            workers->insert(workers->end(), s.workers.begin(), s.workers.end());
    }
    if (workers && all_workers)
        workers->clear();
    return wanted;
}

void StreamHub::add(const std::shared_ptr<Client>& client)
{
    copy_on_write(clients_, [&](Clients& clients) {
        clients.emplace_back(client->id(), client);
        return true;
    });
}

void StreamHub::remove(std::uint64_t client)
{
    // With the totals' lock: a scrape sees a leaving client's counts in the list or in gone_,
    // never in neither (a Prometheus counter must not go down).
    const std::lock_guard lock(totals_);
    const std::weak_ptr<Client> removed = copy_on_write(clients_, [&](Clients& clients) {
        const auto it = std::find_if(clients.begin(), clients.end(), [&](const auto& c) { return c.first == client; });
        if (it == clients.end())
            return std::weak_ptr<Client>();
        std::weak_ptr<Client> found = it->second;
        clients.erase(it);
        return found;
    });
    if (const auto c = removed.lock()) {
        const protocol::Missed missed = c->queue().missed();
        gone_.dropped += missed.dropped;
        gone_.coalesced += missed.coalesced;
    }
}

protocol::Missed StreamHub::missed_totals() const
{
    const std::lock_guard lock(totals_);
    protocol::Missed total = gone_;
    for (const auto& [id, weak] : *clients_.load())
        if (const auto c = weak.lock()) {
            const protocol::Missed missed = c->queue().missed();
            total.dropped += missed.dropped;
            total.coalesced += missed.coalesced;
        }
    return total;
}

std::size_t StreamHub::clients() const
{
    return clients_.load()->size();
}

void StreamHub::set_tenant(JobId job, const std::string& tenant)
{
    copy_on_write(tenants_, [&](Tenants& tenants) {
        tenants[job] = tenant;
        return true;
    });
}

std::string StreamHub::tenant_of(JobId job) const
{
    const std::shared_ptr<const Tenants> tenants = tenants_.load();
    const auto it = tenants->find(job);
    return it != tenants->end() ? it->second : std::string(protocol::kDefaultTenant);
}

std::vector<std::shared_ptr<Client>> StreamHub::subscribers(protocol::Stream stream, JobId job) const
{
    // The cluster's stream is every tenant's: it shows how full the cluster is, by job id.
    const std::string tenant = tenant_of(job);
    std::vector<std::shared_ptr<Client>> out;
    for (const auto& [id, weak] : *clients_.load())
        if (auto client = weak.lock(); client && client->wants(stream, job)
            && (stream == protocol::Stream::Cluster || client->reach().covers(tenant)))
            out.push_back(std::move(client));
    return out;
}

void StreamHub::fan_out(
    protocol::Stream stream, JobId job, const protocol::ServerMessage& message, const std::string& key)
{
    Frame frame;
    for (const auto& client : subscribers(stream, job)) {
        if (!frame)
            frame = std::make_shared<const std::string>(protocol::encode(message));
        client->send_frame(frame, key);
    }
}

void StreamHub::publish(const protocol::IterationRows& rows)
{
    Frame all;
    for (const auto& client : subscribers(protocol::Stream::Iterations, rows.job)) {
        std::vector<WorkerId> only;
        client->wants(protocol::Stream::Iterations, rows.job, &only);
        if (only.empty()) {
            if (!all)
                all = std::make_shared<const std::string>(protocol::encode(protocol::ServerMessage { rows }));
            client->send_frame(all);
            continue;
        }
        protocol::IterationRows some { rows.job, rows.iteration, {} };
        for (const IterationRecord& r : rows.rows)
            if (std::find(only.begin(), only.end(), r.worker) != only.end())
                some.rows.push_back(r);
        if (!some.rows.empty())
            client->send(some, Delivery::Droppable);
    }
}

void StreamHub::publish(const protocol::Evaluation& e)
{
    fan_out(protocol::Stream::Evaluations, e.evaluation.job, e, {});
}
void StreamHub::publish(const protocol::Event& e)
{
    fan_out(protocol::Stream::Events, e.event.job, e, {});
}
void StreamHub::publish(const protocol::JobUpdate& s)
{
    fan_out(protocol::Stream::Jobs, s.status.job, s, "job-status:" + std::to_string(s.status.job));
}
void StreamHub::publish(const protocol::ClusterUpdate& c)
{
    // Encoded once for the clients reaching every tenant, and once for each tenant's.
    Frame all;
    std::map<std::string, Frame> of_tenant;
    for (const auto& client : subscribers(protocol::Stream::Cluster, 0)) {
        const access::TenantReach& reach = client->reach();
        Frame& frame = reach.all ? all : of_tenant[reach.tenant];
        if (!frame) {
            protocol::ClusterUpdate shown = c;
            if (!reach.all)
                shown.cluster = access::shown_to(c.cluster, reach);
            frame = std::make_shared<const std::string>(protocol::encode(protocol::ServerMessage { shown }));
        }
        client->send_frame(frame, "cluster-state");
    }
}
void StreamHub::publish(const protocol::WorkerUpdate& w)
{
    fan_out(protocol::Stream::Workers, w.job, w, "worker-states:" + std::to_string(w.job));
}

} // namespace fulcrum::serve
