#include "sched/simulator.h"

#include "sched/comm_policy.h"
#include "sched/placement.h"
#include "sched/statistics.h"
#include "sched/workload.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <set>

namespace fulcrum::sched {

namespace {

enum class EventKind : std::uint8_t { Arrival, ComputeDone, CommDone };

struct Event {
    double time;
    std::uint64_t seq; // ties in scheduling order: deterministic
    EventKind kind;
    int target; // job for Arrival/CommDone, GPU for ComputeDone
    std::uint32_t version;
};

struct Later {
    bool operator()(const Event& x, const Event& y) const
    {
        return x.time > y.time || (x.time == y.time && x.seq > y.seq);
    }
};

enum Stage : std::uint8_t { ForwardReady, BackwardReady, Done, Running };

struct JobRun {
    const JobSpec* spec = nullptr;
    std::vector<int> gpus;
    std::vector<int> servers; // distinct, sorted
    std::vector<std::uint8_t> stage; // per worker slot
    int backwards_left = 0;
    std::int64_t done = 0;
    double remaining_service = 0; // SRSF key: remaining compute x GPUs (communication ignored)
    double comm_workload_s = 0; // per iteration, in each of its GPUs' workload (placement_comm_b)
    bool placed = false, finished = false;
    double placed_s = 0, finish_s = 0;
    // The all-reduce in flight: a fluid transfer at eq. 5's per-byte rate for the current
    // contention, after the start-up latency a.
    bool comm_running = false, comm_on_links = false;
    double bytes_left = 0, anchor_s = 0, per_byte_s = 0, comm_start_s = 0;
    int contention = 0, peak_contention = 0;
    std::uint32_t comm_version = 0;
    std::uint64_t stamp = 0;
};

struct Gpu {
    int server = 0;
    double busy_s = 0;
    int running_job = -1;
    int running_slot = 0;
    bool running_backward = false;
    double task_start_s = 0;
    std::vector<std::pair<int, int>> jobs; // (job, slot) placed here
    bool span_open = false;
    TimelineSpan span;
};

class Simulation final : public LinkState {
public:
    Simulation(const ClusterSpec& cluster, std::vector<JobSpec> jobs, const SimulationOptions& options)
        : cluster_(cluster)
        , options_(options)
        , specs_(std::move(jobs))
        , placement_(make_placement(options.placement, options.seed))
        , comm_(make_scheduled_comm_policy(options.comm, cluster.network))
    {
        result_.placement = placement_->name();
        result_.comm = comm_->name();
        gpus_.resize(static_cast<std::size_t>(cluster.gpus()));
        states_.resize(gpus_.size());
        for (std::size_t g = 0; g < gpus_.size(); ++g) {
            gpus_[g].server = cluster.server_of(static_cast<int>(g));
            states_[g] = { gpus_[g].server, 0.0, cluster.gpu_memory_gb };
        }
        links_.resize(static_cast<std::size_t>(cluster.servers));
        runs_.resize(specs_.size());
        for (std::size_t j = 0; j < specs_.size(); ++j) {
            JobRun& r = runs_[j];
            r.spec = &specs_[j];
            if (auto why = check_submission(specs_[j], cluster)) {
                result_.rejected.push_back({ specs_[j], *why });
                r.finished = true;
                continue;
            }
            ++to_finish_;
            r.remaining_service
                = static_cast<double>(specs_[j].iterations) * specs_[j].compute_per_iteration_s() * specs_[j].gpus;
            push(specs_[j].arrival_s, EventKind::Arrival, static_cast<int>(j), 0);
        }
    }

    SimulationResult run()
    {
        while (!events_.empty()) {
            const Event e = events_.top();
            events_.pop();
            now_ = e.time;
            switch (e.kind) {
            case EventKind::Arrival:
                pending_.insert({ runs_[static_cast<std::size_t>(e.target)].remaining_service, e.target });
                try_place();
                break;
            case EventKind::ComputeDone:
                compute_done(e.target);
                break;
            case EventKind::CommDone:
                if (runs_[static_cast<std::size_t>(e.target)].comm_version == e.version)
                    comm_done(e.target);
                break;
            }
        }
        finish();
        return std::move(result_);
    }

    int tasks_on(int server) const override
    {
        return static_cast<int>(links_[static_cast<std::size_t>(server)].size());
    }
    double remaining_bytes_of_sole_task(int server) const override
    {
        return remaining_bytes(runs_[static_cast<std::size_t>(links_[static_cast<std::size_t>(server)].front())]);
    }

private:
    void push(double time, EventKind kind, int target, std::uint32_t version)
    {
        events_.push({ time, seq_++, kind, target, version });
    }

    // --- placement -------------------------------------------------------------------
    void try_place()
    {
        // Feasibility is monotone in GPUs and memory, so count the GPUs with room for each
        // memory need once (until a placement changes it) instead of asking the policy for
        // every waiting job.
        std::map<double, int> room;
        const auto room_for = [&](double memory) {
            auto it = room.find(memory);
            if (it == room.end()) {
                int n = 0;
                for (const GpuState& g : states_)
                    n += g.free_memory_gb >= memory;
                it = room.emplace(memory, n).first;
            }
            return it->second;
        };
        for (auto it = pending_.begin(); it != pending_.end();) {
            const int j = it->second;
            const JobSpec& spec = specs_[static_cast<std::size_t>(j)];
            if (room_for(spec.model.memory_gb) < spec.gpus) {
                ++it;
                continue;
            }
            std::vector<int> chosen = placement_->place(spec, cluster_, states_);
            if (chosen.empty()) {
                ++it;
                continue;
            }
            it = pending_.erase(it);
            room.clear();
            assign(j, std::move(chosen));
        }
    }

    void assign(int j, std::vector<int> chosen)
    {
        JobRun& r = runs_[static_cast<std::size_t>(j)];
        const JobSpec& spec = *r.spec;
        r.gpus = std::move(chosen);
        r.placed = true;
        r.placed_s = now_;
        r.stage.assign(r.gpus.size(), ForwardReady);
        r.backwards_left = spec.gpus;
        for (std::size_t slot = 0; slot < r.gpus.size(); ++slot) {
            const auto g = static_cast<std::size_t>(r.gpus[slot]);
            r.servers.push_back(gpus_[g].server);
            gpus_[g].jobs.emplace_back(j, static_cast<int>(slot));
            // Exclusive: a held GPU shows no room, so no policy places another job on it.
            states_[g].free_memory_gb
                = options_.exclusive_gpus ? 0.0 : states_[g].free_memory_gb - spec.model.memory_gb;
            states_[g].workload_s += static_cast<double>(spec.iterations) * spec.compute_per_iteration_s();
        }
        std::sort(r.servers.begin(), r.servers.end());
        r.servers.erase(std::unique(r.servers.begin(), r.servers.end()), r.servers.end());
        r.comm_workload_s = r.servers.size() > 1 ? cluster_.placement_comm_b * spec.model.model_bytes : 0.0;
        for (int g : r.gpus)
            states_[static_cast<std::size_t>(g)].workload_s += static_cast<double>(spec.iterations) * r.comm_workload_s;
        for (int g : r.gpus)
            dispatch(g);
    }

    // --- compute ---------------------------------------------------------------------
    void dispatch(int g)
    {
        Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
        if (gpu.running_job >= 0)
            return;
        int best = -1, best_slot = 0;
        for (const auto& [j, slot] : gpu.jobs) {
            const JobRun& r = runs_[static_cast<std::size_t>(j)];
            if (r.stage[static_cast<std::size_t>(slot)] > BackwardReady)
                continue;
            if (best < 0 || r.remaining_service < runs_[static_cast<std::size_t>(best)].remaining_service
                || (r.remaining_service == runs_[static_cast<std::size_t>(best)].remaining_service && j < best)) {
                best = j;
                best_slot = slot;
            }
        }
        if (best < 0)
            return;
        JobRun& r = runs_[static_cast<std::size_t>(best)];
        std::uint8_t& stage = r.stage[static_cast<std::size_t>(best_slot)];
        const bool backward = stage == BackwardReady;
        stage = Running;
        gpu.running_job = best;
        gpu.running_slot = best_slot;
        gpu.running_backward = backward;
        gpu.task_start_s = now_;
        push(now_ + (backward ? r.spec->model.backward_s : r.spec->model.forward_s), EventKind::ComputeDone, g, 0);
        if (options_.record_spans) {
            if (gpu.span_open && (gpu.span.job != best || gpu.span.end_s < now_)) {
                result_.spans.push_back(gpu.span);
                gpu.span_open = false;
            }
            if (!gpu.span_open) {
                gpu.span = { TimelineSpan::Kind::Compute, g, best, now_, now_, r.done, 0, 1 };
                gpu.span_open = true;
            }
        }
    }

    void compute_done(int g)
    {
        Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
        const int j = gpu.running_job;
        const bool backward = gpu.running_backward;
        const auto slot = static_cast<std::size_t>(gpu.running_slot);
        gpu.running_job = -1;
        const double busy = now_ - gpu.task_start_s;
        gpu.busy_s += busy;
        states_[static_cast<std::size_t>(g)].workload_s
            = std::max(0.0, states_[static_cast<std::size_t>(g)].workload_s - busy);
        add_utilization(gpu.task_start_s, now_);
        ++result_.tasks;
        if (options_.record_spans) {
            gpu.span.end_s = now_;
            gpu.span.iterations += backward;
        }
        JobRun& r = runs_[static_cast<std::size_t>(j)];
        if (!backward) {
            r.stage[slot] = BackwardReady;
        } else {
            r.stage[slot] = Done;
            if (--r.backwards_left == 0)
                start_all_reduce(j);
        }
        dispatch(g);
    }

    void add_utilization(double start, double end)
    {
        const double bin = options_.utilization_bin_s;
        auto first = static_cast<std::size_t>(start / bin);
        const auto last = static_cast<std::size_t>(end / bin);
        if (busy_bins_.size() <= last)
            busy_bins_.resize(last + 1, 0.0);
        if (first == last) {
            busy_bins_[first] += end - start;
            return;
        }
        busy_bins_[first] += (static_cast<double>(first + 1) * bin) - start;
        for (++first; first < last; ++first)
            busy_bins_[first] += bin;
        busy_bins_[last] += end - static_cast<double>(last) * bin;
    }

    // --- communication ---------------------------------------------------------------
    void start_all_reduce(int j)
    {
        JobRun& r = runs_[static_cast<std::size_t>(j)];
        if (r.spec->gpus == 1) {
            finish_iteration(j);
            return;
        }
        if (r.servers.size() == 1) { // inside one server: PCIe/NVLink, no network contention
            r.comm_running = true;
            r.comm_on_links = false;
            r.comm_start_s = now_;
            r.peak_contention = 0;
            push(now_ + cluster_.network.a + cluster_.intra_server_b * r.spec->model.model_bytes, EventKind::CommDone,
                j, ++r.comm_version);
            return;
        }
        comm_ready_.insert({ r.remaining_service, j });
        try_start_comm();
    }

    void try_start_comm()
    {
        for (auto it = comm_ready_.begin(); it != comm_ready_.end();) {
            const int j = it->second;
            JobRun& r = runs_[static_cast<std::size_t>(j)];
            if (!comm_->admit(r.spec->model.model_bytes, r.servers, *this)) {
                ++it;
                continue;
            }
            it = comm_ready_.erase(it);
            r.comm_running = true;
            r.comm_on_links = true;
            r.comm_start_s = now_;
            r.bytes_left = r.spec->model.model_bytes;
            r.anchor_s = now_ + cluster_.network.a;
            r.contention = 0;
            r.peak_contention = 0;
            for (int s : r.servers)
                links_[static_cast<std::size_t>(s)].push_back(j);
            refresh_rates(r.servers);
        }
    }

    double remaining_bytes(const JobRun& r) const
    {
        return now_ <= r.anchor_s ? r.bytes_left : std::max(0.0, r.bytes_left - (now_ - r.anchor_s) / r.per_byte_s);
    }

    // Contention changed on these servers: every transfer crossing them moves on at its new
    // eq. 5 rate (k = the most tasks on any link it uses), from what it has left.
    void refresh_rates(const std::vector<int>& servers)
    {
        ++stamp_;
        for (int s : servers)
            for (int j : links_[static_cast<std::size_t>(s)]) {
                JobRun& r = runs_[static_cast<std::size_t>(j)];
                if (r.stamp == stamp_)
                    continue;
                r.stamp = stamp_;
                int k = 0;
                for (int t : r.servers)
                    k = std::max(k, static_cast<int>(links_[static_cast<std::size_t>(t)].size()));
                if (k == r.contention)
                    continue;
                if (r.contention > 0) {
                    r.bytes_left = remaining_bytes(r);
                    r.anchor_s = std::max(now_, r.anchor_s);
                }
                r.contention = k;
                r.peak_contention = std::max(r.peak_contention, k);
                r.per_byte_s = cluster_.network.seconds_per_byte(k);
                push(r.anchor_s + r.bytes_left * r.per_byte_s, EventKind::CommDone, j, ++r.comm_version);
            }
    }

    void comm_done(int j)
    {
        JobRun& r = runs_[static_cast<std::size_t>(j)];
        r.comm_running = false;
        for (int g : r.gpus) {
            double& workload = states_[static_cast<std::size_t>(g)].workload_s;
            workload = std::max(0.0, workload - r.comm_workload_s);
        }
        ++result_.tasks;
        ++r.comm_version;
        if (options_.record_spans) {
            TimelineSpan span { TimelineSpan::Kind::AllReduce, -1, j, r.comm_start_s, now_, r.done, 1,
                r.peak_contention };
            result_.spans.push_back(span);
        }
        if (r.comm_on_links) {
            for (int s : r.servers) {
                auto& on = links_[static_cast<std::size_t>(s)];
                on.erase(std::find(on.begin(), on.end(), j));
            }
            r.contention = 0;
            refresh_rates(r.servers);
        }
        finish_iteration(j);
        if (r.comm_on_links)
            try_start_comm();
    }

    // --- iterations and jobs ------------------------------------------------------------
    void finish_iteration(int j)
    {
        JobRun& r = runs_[static_cast<std::size_t>(j)];
        const JobSpec& spec = *r.spec;
        ++r.done;
        r.remaining_service
            = static_cast<double>(spec.iterations - r.done) * spec.compute_per_iteration_s() * spec.gpus;
        if (r.done == spec.iterations) {
            finish_job(j);
            return;
        }
        std::fill(r.stage.begin(), r.stage.end(), static_cast<std::uint8_t>(ForwardReady));
        r.backwards_left = spec.gpus;
        for (int g : r.gpus)
            dispatch(g);
    }

    void finish_job(int j)
    {
        JobRun& r = runs_[static_cast<std::size_t>(j)];
        r.finished = true;
        r.finish_s = now_;
        for (int g : r.gpus) {
            Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
            gpu.jobs.erase(std::find_if(gpu.jobs.begin(), gpu.jobs.end(), [&](const auto& p) { return p.first == j; }));
            auto& free = states_[static_cast<std::size_t>(g)].free_memory_gb;
            free = options_.exclusive_gpus ? cluster_.gpu_memory_gb : free + r.spec->model.memory_gb;
            if (gpu.jobs.empty())
                states_[static_cast<std::size_t>(g)].workload_s = 0; // no drift left behind
        }
        ++finished_;
        if (options_.progress
            && (finished_ * 100 / std::max(1, to_finish_)) != ((finished_ - 1) * 100 / std::max(1, to_finish_)))
            options_.progress(static_cast<double>(finished_) / to_finish_);
        try_place();
    }

    void finish()
    {
        for (Gpu& gpu : gpus_)
            if (gpu.span_open)
                result_.spans.push_back(gpu.span);
        double busy = 0;
        for (std::size_t j = 0; j < runs_.size(); ++j) {
            const JobRun& r = runs_[j];
            if (r.placed && r.finished) {
                result_.jobs.push_back({ specs_[j], r.gpus, r.placed_s, r.finish_s });
                result_.makespan_s = std::max(result_.makespan_s, r.finish_s);
            } else if (!r.finished) {
                result_.never_ran.push_back(
                    { specs_[j], "was never placed: no set of GPUs with room for it came free" });
            }
        }
        for (const Gpu& gpu : gpus_)
            busy += gpu.busy_s;
        if (result_.makespan_s > 0)
            result_.gpu_utilization = busy / (result_.makespan_s * static_cast<double>(gpus_.size()));
        const double bin = options_.utilization_bin_s;
        for (std::size_t b = 0; b < busy_bins_.size(); ++b) {
            const double width = std::min(bin, result_.makespan_s - static_cast<double>(b) * bin);
            result_.utilization_over_time.push_back(
                width > 0 ? busy_bins_[b] / (width * static_cast<double>(gpus_.size())) : 0.0);
        }
        std::sort(result_.spans.begin(), result_.spans.end(), [](const TimelineSpan& x, const TimelineSpan& y) {
            return x.start_s < y.start_s
                || (x.start_s == y.start_s && (x.gpu < y.gpu || (x.gpu == y.gpu && x.job < y.job)));
        });
    }

    const ClusterSpec& cluster_;
    const SimulationOptions& options_;
    std::vector<JobSpec> specs_;
    std::unique_ptr<PlacementPolicy> placement_;
    std::unique_ptr<CommPolicy> comm_;
    std::vector<JobRun> runs_;
    std::vector<Gpu> gpus_;
    std::vector<GpuState> states_;
    std::vector<std::vector<int>> links_; // per server: the cross-server all-reduces using its link
    std::set<std::pair<double, int>> pending_, comm_ready_; // SRSF order (remaining service, job)
    std::priority_queue<Event, std::vector<Event>, Later> events_;
    std::vector<double> busy_bins_;
    SimulationResult result_;
    double now_ = 0;
    std::uint64_t seq_ = 0, stamp_ = 0;
    int to_finish_ = 0, finished_ = 0;
};

std::vector<double> jcts(const std::vector<JobOutcome>& jobs)
{
    std::vector<double> v;
    v.reserve(jobs.size());
    for (const JobOutcome& j : jobs)
        v.push_back(j.jct_s());
    return v;
}

} // namespace

double SimulationResult::average_jct_s() const
{
    return mean_of(jcts(jobs));
}
double SimulationResult::percentile_jct_s(double p) const
{
    return percentile_of(jcts(jobs), p);
}
double SimulationResult::median_jct_s() const
{
    return median_of(jcts(jobs));
}

SimulationResult simulate(const ClusterSpec& cluster, std::vector<JobSpec> jobs, const SimulationOptions& options)
{
    if (options.utilization_bin_s <= 0)
        throw std::invalid_argument("utilization bin must be positive seconds");
    return Simulation(cluster, std::move(jobs), options).run();
}

} // namespace fulcrum::sched
