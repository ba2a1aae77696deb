#pragma once

#include "train/external_ranks.h"
#include "train/safe_point_mail.h"
#include "train/trainer.h"

#include <chrono>
#include <deque>
#include <memory>

namespace fulcrum::train {

// An external job's settings: its ranks' names, the global batch X the manager splits,
// the planned iterations, and how often a rank evaluates.
struct ExternalJobConfig {
    JobId job = 0;
    std::vector<std::string> ranks;
    std::int32_t total_batch = 128;
    std::int64_t iterations = 100;
    std::int64_t eval_interval = 100;
    StallSpec stall; // when a rank that has not reported is stalled (issue 42); reported only
    int plan_ahead = 0; // scenario::ExternalSpec::plan_ahead
};

// The trainer of a job whose ranks another framework runs (a torch.distributed job through
// fulcrum_torch): an external framework process is one more kind of worker endpoint. At
// every barrier it gathers the ranks' reports, records them as the job's rows, asks the
// BatchSizeManager (LB-BSP Algorithm 1 or 2, pins and exclusions applied) for the next
// sizes and sends every rank the whole allocation; the framework aggregates with LB-BSP eq.
// 7 in its own all-reduce. The control mailbox works as for built-in jobs: pause holds the
// ranks' next plan, pin, exclude and set-policy take effect at the next barrier, an injected
// straggler makes a rank sleep. Sync-model switches are refused (the framework's all-reduce
// is the barrier). A lost rank ends the job with "job-lost" (RankLost from run()),
// after every other rank was told, so none waits forever.
class ExternalTrainer final : public Trainer {
public:
    ExternalTrainer(ExternalJobConfig config, std::unique_ptr<balance::BatchSizeManager> manager,
        std::shared_ptr<ExternalRanks> ranks, TrainingObserver& observer);
    ~ExternalTrainer() override;

    TrainingResult run(const std::atomic<bool>* stop = nullptr) override;
    // Throws InputError: the parameters live in the framework's ranks, not here.
    void resume_from_checkpoint(const std::string& state) override;
    std::int64_t samples_trained() const override { return 0; }
    std::vector<std::int64_t> rows_recorded_through() const override { return {}; }
    JobControl& control() override { return *control_; }
    balance::BatchSizeManager& manager() override { return *manager_; }

private:
    void emit(std::int64_t at, double now, EventKind kind, std::string message, const EventActor& actor,
        std::optional<WorkerId> worker = std::nullopt);
    [[noreturn]] void lose(const GatheredReports& gathered, std::int64_t at, double now);
    // Sizes iteration k + plan_ahead (from `observations` of k - 1, unless k is the first this
    // run trains: the initial allocation is planned for it and the plan_ahead after it), sets `allocation` to iteration
    // k's as planned, applies the operator's straggler drills and sends every rank its plan,
    // with the sizes planned ahead; returns when it was sent.
    double answer(std::int64_t k, const std::vector<balance::WorkerObservation>& observations, double closed,
        balance::Allocation& allocation, std::chrono::steady_clock::time_point start);
    std::vector<IterationRecord> rows_of(const GatheredReports& gathered, const balance::Allocation& given,
        std::int64_t k, double opened, double closed) const;
    // Gathers iteration k's reports; a rank that stalls meanwhile is recorded (worker-stalled)
    // and, once every report is in, its recovery; `stalled` says which.
    GatheredReports gather_watching(std::int64_t k, const std::atomic<bool>* stop, const balance::Allocation& given,
        double opened, std::vector<bool>& stalled);
    // Rank r's predicted time for its batch of `given`: its size over the policy's predicted
    // speed, or its last measured speed; none before either is known.
    std::optional<double> predicted_s(std::size_t r, const balance::Allocation& given) const;
    std::string who(std::size_t r) const; // "rank 1 (rank-1)"

    const ExternalJobConfig config_;
    std::unique_ptr<balance::BatchSizeManager> manager_;
    std::unique_ptr<JobControl> control_;
    std::unique_ptr<SafePointMail> mail_; // after control_: it hands control_'s mail over
    std::shared_ptr<ExternalRanks> ranks_;
    TrainingObserver& observer_;
    std::vector<double> slowdowns_;
    std::deque<balance::Allocation> planned_; // iterations after the one under way, already sized
    std::int64_t first_ = 0; // the first iteration this run trains: 0, or a restarted group's resume_from
    std::vector<double> measured_speed_; // by rank, samples per second of its last batch; 0: none
};

} // namespace fulcrum::train
