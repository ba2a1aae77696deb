// A structure-aware fuzzer of submit-job against a real fulcrumd started under a memory
// limit (prlimit --as, as `ulimit -v` sets it) with a smaller --memory-budget. Scenarios are
// generated from the shipped scenarios and the parser's schema (scenario::path_fields):
// values of every JSON kind put in every field, sizes from 0 to far past every bound, deep
// nesting, hostile path names and unicode. Every submission must be answered: accepted (the
// job is cancelled at once) or refused with a code and the field it names; fulcrumd must
// live through all of them with its resident memory within the budget. Seeded: a failure
// names the seed and the case, and FULCRUM_FUZZ_CASES sets how many (default 3000).

#include "access/auth.h"
#include "process_support.h"
#include "scenario/path_fields.h"
#include "ws_client.h"

#include <boost/json.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr double kBudget = 1.5 * (1u << 30); // fulcrumd's --memory-budget
constexpr double kLimit = 4.0 * (1u << 30); // its address-space limit (threads reserve stacks)

json::value load(const fs::path& file)
{
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    json::parse_options options;
    options.allow_comments = true;
    options.allow_trailing_commas = true;
    return json::parse(text.str(), {}, options);
}

class Generator {
public:
    explicit Generator(std::uint64_t seed)
        : rng_(seed)
    {
    }

    int below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
    bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

    // A value of any JSON kind, sized to hurt: the bounds of every range and far past them.
    json::value hostile_value(int depth = 0)
    {
        static const std::vector<double> numbers { 0, -1, 1, 0.5, 1e-300, -1e300, 1e18, 65536, 65537, 4096, 4097,
            100'000, 1'000'000, 1e7, 10'000'001, 2147483648.0, 9.3e18 };
        static const std::vector<std::string> strings { "", "fashion-mnist", "mlp", "bsp", "virtual", "lbbsp-cpu",
            "narx", std::string(3000, 'x'), "\xF0\x9F\x92\xA5 explosion", "\xE2\x80\xAEtxt.exe", "a\u0301\u0301\u0301",
            "line\nbreak", std::string("nul\0byte", 8), "..", "/etc/passwd", "%s%n%x" };
        // Containers only near the top: a branching tree grows without bound.
        switch (below(depth >= 2 ? 5 : 8)) {
        case 0:
            return nullptr;
        case 1:
            return chance(0.5);
        case 2:
            return numbers[static_cast<std::size_t>(below(static_cast<int>(numbers.size())))];
        case 3:
            return std::int64_t { below(2) ? 3 : -3 } * (std::int64_t { 1 } << below(62));
        case 4:
            return json::string(strings[static_cast<std::size_t>(below(static_cast<int>(strings.size())))]);
        case 5: {
            json::array a;
            const int n = depth == 0 && below(4) == 0 ? 200 : below(5);
            for (int i = 0; i < n; ++i)
                a.push_back(hostile_value(depth + 1));
            return a;
        }
        case 6: {
            json::object o;
            for (int i = 0; i < below(4); ++i)
                o["k" + std::to_string(below(3))] = hostile_value(depth + 1);
            return o;
        }
        default: { // nesting as deep as a frame allows the parser to meet
            json::value v = nullptr;
            for (int i = 0, n = 50 + below(400); i < n; ++i)
                v = below(2) ? json::value(json::array { v }) : json::value(json::object { { "x", v } });
            return v;
        }
        }
    }

    // Every place in the tree, so that any field can be hit.
    void places(json::value& v, std::vector<json::value*>& out)
    {
        out.push_back(&v);
        if (v.is_object())
            for (auto& [k, child] : v.as_object())
                places(child, out);
        else if (v.is_array())
            for (auto& child : v.as_array())
                places(child, out);
    }

    // A shipped scenario, mutated a few times over.
    json::value scenario(const std::vector<json::value>& corpus)
    {
        json::value s = corpus[static_cast<std::size_t>(below(static_cast<int>(corpus.size())))];
        for (int m = 0, n = 1 + below(4); m < n; ++m)
            mutate(s);
        if (s.is_object()) { // fast to cancel: nothing waits for a remote worker
            s.as_object()["name"] = below(3) == 0 ? hostile_value() : json::value("fuzz");
        }
        return s;
    }

    void mutate(json::value& s)
    {
        std::vector<json::value*> all;
        places(s, all);
        json::value& at = *all[static_cast<std::size_t>(below(static_cast<int>(all.size())))];
        switch (below(6)) {
        case 0: // any value anywhere
            at = hostile_value();
            break;
        case 1: // a field removed, or one no version knows
            if (at.is_object() && !at.as_object().empty()) {
                if (below(2))
                    at.as_object().erase(at.as_object().begin());
                else
                    at.as_object()["no_such_field"] = hostile_value();
            }
            break;
        case 2: // the model's size
            if (s.is_object()) {
                json::array hidden;
                for (int i = 0, n = below(9); i < n; ++i)
                    hidden.push_back(std::int64_t { 1 } << below(17));
                s.as_object()["model"] = json::object { { "type", "mlp" }, { "hidden", hidden } };
            }
            break;
        case 3: // the workers' count
            if (s.is_object())
                s.as_object()["workers"]
                    = json::array { json::object { { "speed", 1000 }, { "count", std::int64_t { 1 } << below(21) } } };
            break;
        case 4: { // a path field from the schema, with a hostile name
            const auto& fields = scenario::path_fields();
            const scenario::PathField& field = fields[static_cast<std::size_t>(below(static_cast<int>(fields.size())))];
            static const std::vector<std::string> names { "/etc/shadow", "../../x", ".", "", "./", "a/../../b",
                std::string("x\0y", 3), "/dev/zero", std::string(5000, 'n'), "\xF0\x9F\x98\x80", "fashion-mnist" };
            std::string example(field.example);
            example.replace(example.find("@PATH@"), 6, "PLACEHOLDER");
            json::value sections = json::parse(example);
            std::vector<json::value*> spots;
            places(sections, spots);
            for (json::value* spot : spots)
                if (spot->is_string() && spot->as_string() == "PLACEHOLDER")
                    *spot = json::string(names[static_cast<std::size_t>(below(static_cast<int>(names.size())))]);
            if (s.is_object())
                for (auto& [k, v] : sections.as_object())
                    s.as_object()[k] = v;
            break;
        }
        default: // sizes of the run
            if (s.is_object() && s.as_object().contains("training") && s.as_object()["training"].is_object())
                s.as_object()["training"].as_object()[below(2) ? "total_batch" : "iterations"] = std::int64_t { 1 }
                    << below(40);
            break;
        }
    }

private:
    std::mt19937_64 rng_;
};

// fulcrumd's resident memory, from /proc (bytes).
double resident_bytes(pid_t pid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stod(line.substr(6)) * 1024;
    return -1;
}

} // namespace

TEST(SubmitJobFuzz, EverySubmissionIsAnsweredAndFulcrumdLivesWithinItsBudget)
{
    const fs::path dir = fs::temp_directory_path() / ("fulcrum-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path log = dir / "fulcrumd.log";
    const pid_t fulcrumd = testing_support::spawn_logged(
        { "/usr/bin/prlimit", "--as=" + std::to_string(static_cast<long long>(kLimit)), "--", FULCRUM_DAEMON_BINARY,
            "--data-dir", (dir / "data").string(), "--listen", "127.0.0.1:0", "--no-demo", "--memory-budget",
            std::to_string(static_cast<long long>(kBudget)) },
        log);
    testing_support::Reaper reaper(fulcrumd);
    const unsigned short port = testing_support::announced_port(log);
    ASSERT_NE(port, 0);
    const std::string token
        = access::TokenStore::load_or_create(dir / "data" / "tokens").token_for(Role::Operator).value_or("");
    testing_support::WsClient op(port, token);
    op.send(Hello { kProtocolVersion, "fuzz" });
    op.receive_until<Welcome>();

    std::vector<json::value> corpus;
    for (const auto& entry : fs::directory_iterator(fs::path(FULCRUM_SOURCE_DIR) / "resources" / "scenarios"))
        if (entry.path().extension() == ".json")
            corpus.push_back(load(entry.path()));
    ASSERT_FALSE(corpus.empty());

    const std::uint64_t seed = 20261126;
    const int cases = std::getenv("FULCRUM_FUZZ_CASES") ? std::atoi(std::getenv("FULCRUM_FUZZ_CASES")) : 3000;
    Generator generate(seed);
    int accepted = 0, refused = 0;
    double peak = 0;
    for (int i = 0; i < cases; ++i) {
        const json::value scenario = generate.scenario(corpus);
        const std::string frame
            = json::serialize(json::object { { "type", "submit-job" }, { "id", "f" }, { "scenario", scenario } });
        if (frame.size() > kMaxFrameBytes) // the frame limit's own test is the protocol's
            continue;
        const Reply reply = op.request(SubmitJob { "f", json::serialize(scenario) }, "f");
        if (reply.error) {
            ++refused;
            EXPECT_FALSE(reply.error->code.empty()) << "seed " << seed << " case " << i;
            if (reply.error->code == "invalid-scenario" || reply.error->code == "illegal-value") {
                EXPECT_FALSE(reply.error->field.empty())
                    << "seed " << seed << " case " << i << ": " << reply.error->message << "\n"
                    << json::serialize(scenario).substr(0, 2000);
            }
        } else {
            ++accepted;
            ASSERT_TRUE(reply.job);
            op.request(JobCommand { "c", JobAction::Cancel, *reply.job }, "c");
        }
        int died = 0;
        ASSERT_EQ(::waitpid(fulcrumd, &died, WNOHANG), 0)
            << "fulcrumd died at case " << i << " of seed " << seed << "\n"
            << json::serialize(scenario).substr(0, 2000);
        const double resident = resident_bytes(fulcrumd);
        peak = std::max(peak, resident);
        ASSERT_LT(resident, kBudget) << "case " << i << " of seed " << seed << " ("
                                     << (reply.error ? "refused" : "accepted") << "):\n"
                                     << json::serialize(scenario).substr(0, 3000);
    }
    std::cout << "submit-job fuzz: " << accepted << " accepted, " << refused << " refused; fulcrumd's peak resident "
              << peak / (1 << 20) << " MiB of a " << kBudget / (1 << 20) << " MiB budget\n";
    EXPECT_GT(refused, cases / 2); // the generator reaches the checks, not only valid scenarios
    ::kill(fulcrumd, SIGTERM);
    int status = 0;
    ::waitpid(fulcrumd, &status, 0);
    reaper.release();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "fulcrumd did not stop cleanly; its log: " << log;
    fs::remove_all(dir);
}
