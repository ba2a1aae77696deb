// LB-BSP journal extension, Fig. 13: cross-silo FedAvg on 5 clients of different speeds,
// each holding two Fashion-MNIST classes. FedAvg against LB-BSP's tuning (batch size from EMA
// speed, τ and η kept) and the two variants the paper rejects (tune τ; scale η with B).
#include "common/error.h"
#include "db/run_recorder.h"
#include "experiment/cluster_builder.h"
#include "experiment/results_table.h"
#include "model/model_factory.h"
#include "train/federated_trainer.h"

#include <numeric>

namespace fulcrum::experiment {

namespace {

// The samples of two classes, as a client's private shard.
std::shared_ptr<const data::Dataset> shard(const data::Dataset& all, int first_class)
{
    std::vector<Eigen::Index> keep;
    for (Eigen::Index i = 0; i < all.size(); ++i)
        if (all.labels[static_cast<std::size_t>(i)] == first_class
            || all.labels[static_cast<std::size_t>(i)] == first_class + 1)
            keep.push_back(i);
    auto d = std::make_shared<data::Dataset>();
    d->name = all.name + " classes " + std::to_string(first_class) + "," + std::to_string(first_class + 1);
    d->classes = all.classes;
    d->features.resize(all.dim(), static_cast<Eigen::Index>(keep.size()));
    for (std::size_t k = 0; k < keep.size(); ++k) {
        d->features.col(static_cast<Eigen::Index>(k)) = all.features.col(keep[k]);
        d->labels.push_back(all.labels[static_cast<std::size_t>(keep[k])]);
    }
    return d;
}

class Capture final : public train::TrainingObserver {
public:
    explicit Capture(db::RunRecorder& recorder)
        : recorder_(recorder)
    {
    }
    void on_iteration(std::span<const IterationRecord> batch) override
    {
        recorder_.record_iterations(batch);
        rows.insert(rows.end(), batch.begin(), batch.end());
    }
    void on_evaluation(const EvaluationRecord& e) override
    {
        recorder_.record_evaluation(e);
        evaluations.push_back(e);
    }
    void on_event(const JobEvent& e) override { recorder_.record_event(record(e)); }

    std::vector<IterationRecord> rows;
    std::vector<EvaluationRecord> evaluations;

private:
    db::RunRecorder& recorder_;
};

} // namespace

void run_federated(const ExperimentOptions& options)
{
    const data::TrainTest& data = fashion_mnist();
    const std::int64_t rounds = options.quick ? 8 : 60;
    const double speeds[] = { 1000, 800, 600, 400, 250 };
    const double target = 0.70;

    ResultsTable table({ "variant", "mean_round_s", "final_accuracy", "best_accuracy", "time_s", "time_to_target_s" });
    for (const std::string& variant : balance::federated_variant_names()) {
        train::TrainerConfig config;
        config.train = data.train;
        config.test = data.test;
        config.prototype = model::make_model({ "softmax", {} }, data.train->dim(), data.train->classes);
        config.seed = options.seed;
        config.target_accuracy = target;
        for (int c = 0; c < 5; ++c) {
            perf::WorkerProfile w;
            w.name = "client-" + std::to_string(c);
            w.cpu.speed = speeds[c];
            w.cpu.noise.sigma = 0.03;
            config.workers.push_back(w);
            config.worker_data.push_back(shard(*data.train, 2 * c));
        }
        train::FederatedConfig federated;
        federated.variant = balance::parse_federated_variant(variant);
        federated.batch_size = 32;
        federated.local_steps = 10;
        federated.learning_rate = 0.05;
        federated.rounds = rounds;

        const std::filesystem::path db = options.out / ("federated-" + variant + ".db");
        std::error_code ec;
        for (const char* suffix : { "", "-wal", "-shm" })
            std::filesystem::remove(db.string() + suffix, ec);
        db::RunRecorder recorder(db);
        db::RunInfo info;
        info.name = "federated-" + variant;
        info.scenario_json = "{\"generated_by\":\"fulcrum-experiment federated\",\"variant\":\"" + variant + "\"}";
        info.mode = "virtual";
        info.seed = options.seed;
        recorder.begin_run(info);
        db::JobInfo job;
        job.name = info.name;
        job.model = config.prototype->name();
        job.parameters = config.prototype->parameter_count();
        job.sync_model = "fedavg";
        job.policy = variant;
        job.total_batch = 32 * 5;
        job.learning_rate = federated.learning_rate;
        job.aggregation = "weighted";
        job.iterations = rounds;
        recorder.add_job(job);
        for (int c = 0; c < 5; ++c)
            recorder.add_worker({ 0, c, config.workers[static_cast<std::size_t>(c)].name, "cpu",
                "{\"speed\":" + std::to_string(speeds[c]) + ",\"classes\":[" + std::to_string(2 * c) + ","
                    + std::to_string(2 * c + 1) + "]}" });
        if (options.status)
            options.status("running federated-" + variant);
        Capture capture(recorder);
        train::FederatedTrainer trainer(std::move(config), federated, capture);
        const train::TrainingResult r = trainer.run();
        recorder.finish_run("finished", "{}");
        table.add({ variant, fmt(r.mean_iteration_s, 4), fmt(r.final_evaluation.test_accuracy, 4),
            fmt(r.best_accuracy, 4), fmt(r.time_s, 2), r.target_time_s ? fmt(*r.target_time_s, 2) : "" });
    }
    table.write_csv(options.out / "results.csv");
    const std::string body
        = "Five clients (1000, 800, 600, 400 and 250 samples/s), client c holding only classes 2c and "
          "2c+1 of Fashion-MNIST; softmax regression; B = 32, τ = 10 local steps, η = 0.05, "
        + std::to_string(rounds)
        + " rounds; FedAvg weights by data size. tune-batch is LB-BSP's rule (B from EMA speed, "
          "τ and η kept); tune-steps and scale-lr are the variants the paper rejects. Target accuracy "
        + fmt(target, 2) + ".\n\n" + table.markdown();
    write_markdown(options.out / "results.md", "Federated learning (LB-BSP journal, Fig. 13)",
        "fulcrum-experiment federated --out " + options.out.string() + " --seed " + std::to_string(options.seed), body);
}

} // namespace fulcrum::experiment
