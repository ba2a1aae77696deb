// fulcrum-experiment: reproduces one of the papers' experiments on the virtual engine and
// writes its results (CSV, Markdown) and run databases into a folder.

#include "common/error.h"
#include "experiment/experiment.h"

#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage = R"(Usage: fulcrum-experiment NAME --out DIR [--seed N] [--quick]

Runs one experiment of the LB-BSP and ElasticBSP papers with real training on the virtual
cluster clock and writes DIR/results.csv, DIR/results.md and the run databases it made
(open them with the console or any SQLite client).

Experiments:
)";

} // namespace

int main(int argc, char** argv)
{
    po::options_description visible("Options");
    std::string name, out, device;
    std::uint64_t seed = 1;
    visible.add_options()("help,h", "show this help")("version", "print the version and exit")(
        "out,o", po::value(&out), "folder for the results (created if missing; files in it are replaced)")(
        "seed,s", po::value(&seed)->default_value(1), "random seed")(
        "quick", "a smaller, shorter version: checks that the experiment runs, not the published figures")("device",
        po::value(&device)->default_value("cpu"),
        "gpu-profile: the device to measure, cpu or cuda:N (writes DIR/profile.json, a worker's \"gpu\" section)");
    po::options_description hidden;
    hidden.add_options()("name", po::value(&name));
    po::options_description all;
    all.add(visible).add(hidden);
    po::positional_options_description positional;
    positional.add("name", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "fulcrum-experiment: " << e.what() << "\nTry 'fulcrum-experiment --help'.\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kUsage << fulcrum::experiment::describe_experiments() << "\n"
                  << visible << "\nThe figures these produce are collected in docs/results.md.\n";
        return 0;
    }
    if (vm.count("version")) {
        std::cout << "fulcrum-experiment " FULCRUM_VERSION "\n";
        return 0;
    }
    const auto& names = fulcrum::experiment::experiment_names();
    if (name.empty() || std::find(names.begin(), names.end(), name) == names.end()) {
        std::cerr << "fulcrum-experiment: "
                  << (name.empty() ? "no experiment named" : "unknown experiment '" + name + "'")
                  << "; expected one of:\n"
                  << fulcrum::experiment::describe_experiments();
        return 2;
    }
    if (out.empty()) {
        std::cerr << "fulcrum-experiment: --out DIR is required\n";
        return 2;
    }
    fulcrum::experiment::ExperimentOptions options;
    options.out = out;
    options.seed = seed;
    options.quick = vm.count("quick") > 0;
    options.device = device;
    const auto started = std::chrono::steady_clock::now();
    options.status = [&](const std::string& text) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::cerr << "[" << static_cast<int>(s) << " s] " << text << "\n";
    };
    try {
        fulcrum::experiment::run_experiment(name, options);
    } catch (const fulcrum::InputError& e) {
        std::cerr << "fulcrum-experiment: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "fulcrum-experiment: failed: " << e.what() << "\n";
        return 1;
    }
    std::cerr << "results in " << out << "/results.md and results.csv\n";
    return 0;
}
