// fulcrum-run: trains one scenario headless, with a progress bar, and records it.

#include "balance/narx_model_files.h"
#include "common/error.h"
#include "db/run_reader.h"
#include "gpu/device_check.h"
#include "run/run_scenario.h"
#include "run/terminal_progress.h"
#include "train/trainer.h"

#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace po = boost::program_options;

namespace {

std::atomic<bool> g_stop { false };

extern "C" void request_stop(int)
{
    g_stop.store(true);
}

constexpr const char* kUsage = R"(Usage: fulcrum-run SCENARIO --out RUN.db [options]
       fulcrum-run --out RUN.db --resume RUN [options]

Trains the job a scenario file describes (workers, model, data, batch-size policy) with
parameter-server BSP and records every iteration of every worker into a SQLite run store.
Prints a progress bar on stderr and a summary when done. Ctrl-C stops at the next barrier,
keeping everything recorded so far.

A BSP-family job checkpoints into its run store (every 500 iterations and 30 s by
default, the scenario's "checkpoint" section, and at Ctrl-C). --resume continues a run
that was stopped or killed from its last checkpoint, with the scenario recorded in the
store: on the virtual clock the resumed run records exactly the rows the uninterrupted
one would have.

Options)";

} // namespace

int main(int argc, char** argv)
{
    po::options_description visible(kUsage);
    std::string scenario_path, out, mode_text, predictors_dir;
    std::uint64_t seed = 0;
    double pace = 0;
    int threads = 0;
    visible.add_options()("help,h", "show this help")("version", "print the version and exit")("out,o", po::value(&out),
        "run database to record into (created if missing; a new run is appended)")("mode,m", po::value(&mode_text),
        "virtual | paced | real (default: the scenario's mode)\n"
        "  virtual: simulated cluster clock, as fast as possible\n"
        "  paced:   the same, slowed to --pace virtual s per wall s\n"
        "  real:    wall-clock times measured on worker threads")(
        "seed,s", po::value(&seed), "random seed (default: the scenario's)")(
        "pace", po::value(&pace), "virtual seconds per wall second in paced mode")("threads", po::value(&threads),
        "compute threads in virtual/paced mode (default: one per core)")("save-predictors", po::value(&predictors_dir),
        "after the run, write each worker's NARX network to "
        "DIR/worker-N.narx (for policy.predictor.warm_start_file)")(
        "no-record", "train without recording (for measuring the recorder's cost)")("resume", po::value<std::int64_t>(),
        "continue run RUN of --out from its last checkpoint")("json", "print the summary as one JSON object on stdout");
    po::options_description hidden;
    hidden.add_options()("scenario", po::value(&scenario_path));
    po::options_description all;
    all.add(visible).add(hidden);
    po::positional_options_description positional;
    positional.add("scenario", 1);

    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "fulcrum-run: " << e.what() << "\nTry 'fulcrum-run --help'.\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << visible
                  << "\nScenario files are described in docs/scenarios.md; examples are in resources/scenarios/.\n";
        return 0;
    }
    if (vm.count("version")) {
        std::cout << "fulcrum-run " FULCRUM_VERSION "\n";
        return 0;
    }
    const bool resuming = vm.count("resume") > 0;
    if (scenario_path.empty() && !resuming) {
        std::cerr << "fulcrum-run: no scenario file given\nTry 'fulcrum-run --help'.\n";
        return 2;
    }
    if (resuming && (!scenario_path.empty() || vm.count("no-record"))) {
        std::cerr << "fulcrum-run: --resume takes the scenario recorded in --out RUN.db; give no scenario file and no "
                     "--no-record\n";
        return 2;
    }
    const bool record = !vm.count("no-record");
    if (record && out.empty()) {
        std::cerr << "fulcrum-run: --out RUN.db is required (or --no-record)\n";
        return 2;
    }

    fulcrum::run::RunOptions options;
    if (record)
        options.database = out;
    if (vm.count("mode")) {
        options.mode = fulcrum::scenario::parse_mode(mode_text);
        if (!options.mode) {
            std::cerr << "fulcrum-run: --mode: is '" << mode_text << "', expected virtual, paced or real\n";
            return 2;
        }
    }
    if (vm.count("seed"))
        options.seed = seed;
    if (vm.count("pace")) {
        if (!(pace > 0)) {
            std::cerr << "fulcrum-run: --pace: must be positive\n";
            return 2;
        }
        options.pace = pace;
    }
    if (vm.count("threads")) {
        if (threads < 1) {
            std::cerr << "fulcrum-run: --threads: must be at least 1\n";
            return 2;
        }
        options.threads = threads;
    }

    std::vector<std::string> saved_models;
    if (!predictors_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(predictors_dir, ec);
        if (ec || !std::filesystem::is_directory(predictors_dir)) {
            std::cerr << "fulcrum-run: --save-predictors: cannot create directory '" << predictors_dir << "'\n";
            return 2;
        }
        options.on_finish = [&](fulcrum::train::Trainer& trainer) {
            saved_models = fulcrum::balance::save_narx_models(trainer.manager(), predictors_dir);
        };
    }

    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    options.stop = &g_stop;
    fulcrum::run::TerminalProgress progress(stderr);
    options.progress = [&](const fulcrum::run::Progress& p) { progress.update(p); };
    options.status = [&](const std::string& text) { progress.status(text); };

    try {
        fulcrum::scenario::Scenario scenario;
        if (resuming) {
            const auto run = vm["resume"].as<std::int64_t>();
            fulcrum::db::RunReader reader(out);
            const fulcrum::db::RunInfo info = reader.run(run);
            // The run's job: fulcrum-run's is 0, a fulcrumd store's its id there.
            const auto jobs = reader.jobs(run);
            auto checkpoint = reader.checkpoint(run, jobs.empty() ? 0 : jobs.front().id);
            if (!checkpoint)
                throw fulcrum::InputError(out, "run " + std::to_string(run),
                    "has no checkpoint to resume from (status " + info.status
                        + "); checkpoints are written by bsp and backup jobs, every 500 iterations by default");
            scenario = fulcrum::scenario::parse_scenario(info.scenario_json, out + ", run " + std::to_string(run));
            std::cerr << "fulcrum-run: resuming run " << run << " (" << info.name << ", " << info.status
                      << ") from its checkpoint at iteration " << checkpoint->iteration << "\n";
            options.resume = fulcrum::run::RunOptions::Resume { run, std::move(*checkpoint), {}, {} };
        } else {
            scenario = fulcrum::scenario::load_scenario(scenario_path);
        }
        fulcrum::gpu::check_worker_devices(scenario.workers, scenario_path.empty() ? out : scenario_path);
        const auto summary = fulcrum::run::run_scenario(scenario, options);
        progress.finish();
        if (vm.count("json"))
            std::cout << fulcrum::run::to_json(summary) << '\n';
        else
            std::cout << fulcrum::run::to_text(summary);
        if (!predictors_dir.empty()) {
            std::cerr << "fulcrum-run: saved " << saved_models.size() << " NARX network(s) in " << predictors_dir
                      << '\n';
            if (saved_models.empty())
                std::cerr << "fulcrum-run: --save-predictors: the job's policy has no trained NARX networks "
                             "(needs policy lbbsp-cpu with predictor narx and enough iterations)\n";
        }
        return summary.stopped ? 130 : 0;
    } catch (const fulcrum::InputError& e) {
        progress.finish();
        std::cerr << "fulcrum-run: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        progress.finish();
        std::cerr << "fulcrum-run: failed: " << e.what() << '\n';
        return 1;
    }
}
