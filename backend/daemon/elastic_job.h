#pragma once

#include "common/job_event.h"
#include "protocol/messages.h"
#include "scenario/scenario.h"
#include "train/elastic_resize.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::daemon {

class RemotePool;

// A live job as the cluster core's elastic scheduling sees it (ElasticScheduling): what its
// scenario asks for, the record of its members and servers that every resize is checked
// against, its pace on its own run clock, and the resizes, restarts, placements and notes
// the scheduler asks of it. JobRuntime is the job fulcrumd runs; the ClusterCore tests drive
// the scheduler with jobs of their own on a test clock, whose barriers they step.
class ElasticJob {
public:
    virtual ~ElasticJob() = default;

    virtual JobId id() const = 0;
    // The tenant it belongs to: a pooled process is given only to its tenant's jobs.
    virtual const std::string& tenant() const
    {
        static const std::string kDefault(protocol::kDefaultTenant);
        return kDefault;
    }
    virtual const scenario::Scenario& scenario() const = 0;
    virtual protocol::JobStatus status() const = 0;
    // freeze-job: the elastic scheduler leaves its members as they are.
    virtual bool frozen() const = 0;
    // Its members and servers as its trainer last applied them, with the resizes asked of it
    // and not yet applied or refused (so two asked at once are checked one after the other).
    virtual train::Membership membership() const = 0;
    // Resizes handed to its trainer that it has not made or refused yet: while there are
    // some, the book and the pool wait for the trainer's answer before following its members.
    virtual int resizes_in_flight() const = 0;
    // How far it is through its work, in iterations of its first plan, for early feedback.
    struct Work {
        std::int64_t done = 0;
        std::int64_t planned = 0;
    };
    virtual Work work() const = 0;
    // Samples per second of its run clock between the barriers that ended iterations `from`
    // and `to`; nothing before both are known.
    virtual std::optional<double> samples_per_s(std::int64_t from, std::int64_t to) const = 0;
    // The iteration from which `worker` has been a member (0 for an initial one).
    virtual std::int64_t member_since(WorkerId worker) const = 0;
    // Asks for a resolved resize between two iterations (throws RefusedRequest once it ended
    // or while it restarts).
    virtual void resize(const train::ResizeRequest& resolved) = 0;
    // kill-restart: a checkpoint, a stop and a start from it, `changes` applied at once.
    virtual void restart(
        const std::vector<protocol::ResizeJob>& changes, const EventActor& actor, const std::string& reason)
        = 0;
    virtual void place_worker(WorkerId worker, std::int32_t gpu) = 0; // -1: none
    // An event recorded at its next safe point (throws RefusedRequest once it ended).
    virtual void note(
        EventKind kind, std::optional<WorkerId> worker, const std::string& message, const EventActor& actor)
        = 0;
    // Its remote worker slots; null when it has none.
    virtual const std::shared_ptr<RemotePool>& remote() const = 0;

    int workers() const { return static_cast<int>(scenario().workers.size()); }
    // Which worker slots are members (membership's).
    std::vector<bool> member_slots() const { return membership().members; }
    // What its GPUs and pooled processes follow (ElasticScheduling::reconcile), read at once:
    // `trainer`, the members its trainer has (or starts with), and `record`, its members with
    // the asks held for a trainer not started yet made (the resize took or gave their GPU or
    // process already). They differ only while such an ask is held. None while a resize handed
    // to its trainer is unanswered.
    struct Holdings {
        std::vector<bool> trainer, record;
        bool keeps(std::size_t w) const { return trainer.at(w) || record.at(w); }
    };
    virtual std::optional<Holdings> holdings() const = 0;
    int server_count() const { return membership().servers; }
    // An Elastic PS resize checked against the record, once, whoever asks (an operator, the
    // elastic scheduler), its default target named (train::resolve_resize); `reason` is added
    // to the trainer's event. Throws RefusedRequest: "not-elastic" for a job without an
    // elastic section, else resolve_resize's codes.
    train::ResizeRequest resolve(
        const protocol::ResizeJob& resize, const EventActor& actor, const std::string& reason = {}) const;
};

} // namespace fulcrum::daemon
