#pragma once

#include "common/named_values.h"
#include "sched/cluster.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fulcrum::sched {

// What a communication policy may ask about the network now.
class LinkState {
public:
    virtual ~LinkState() = default;
    virtual int tasks_on(int server) const = 0;
    // The bytes still to move of the one task running on the server (tasks_on == 1).
    virtual double remaining_bytes_of_sole_task(int server) const = 0;
};

// Decides whether a ready all-reduce may start now beside what already runs on the links
// of the servers it spans (tasks are non-preemptive once started). Candidates are offered
// in SRSF order: shortest remaining service first.
class CommPolicy {
public:
    virtual ~CommPolicy() = default;
    virtual std::string name() const = 0;
    virtual bool admit(double bytes, std::span<const int> servers, const LinkState& links) const = 0;
};

// SRSF(n): at most n concurrent tasks on any link; n = 1 avoids all contention.
class SrsfCommPolicy final : public CommPolicy {
public:
    explicit SrsfCommPolicy(int n);
    std::string name() const override { return "srsf-" + std::to_string(n_); }
    bool admit(double bytes, std::span<const int> servers, const LinkState& links) const override;

private:
    int n_;
};

// AdaDUAL (Wang et al. Algorithm 2): start on a free link; beside exactly one running task
// only when M_new / M_old < b / (2(b + η)), i.e. when the small newcomer finishes sooner
// than waiting would let it and the old task loses less than that; never beside two.
// Ordered by SRSF this is Ada-SRSF (Algorithm 3). M_old is the running task's remaining
// bytes, what the comparison is about at the moment of the decision.
class AdaDualCommPolicy final : public CommPolicy {
public:
    explicit AdaDualCommPolicy(const ContentionModel& model);
    std::string name() const override { return "ada-srsf"; }
    bool admit(double bytes, std::span<const int> servers, const LinkState& links) const override;
    double threshold() const { return threshold_; }

private:
    double threshold_;
};

// "none" (no schedule: null), "srsf-N" (N >= 1) or "ada-srsf". Throws std::invalid_argument
// for other names.
std::unique_ptr<CommPolicy> make_comm_policy(const std::string& name, const ContentionModel& model);
// The same, refusing "none": the simulator schedules every transfer.
std::unique_ptr<CommPolicy> make_scheduled_comm_policy(const std::string& name, const ContentionModel& model);
// Every communication scheduler with what it does (list-capabilities); srsf-N is one entry.
std::vector<CatalogueEntry> comm_catalogue();

} // namespace fulcrum::sched
