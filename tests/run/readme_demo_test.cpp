// The README shows what the demo prints when it ends. This runs the documented demo
// (resources/scenarios/demo.json) in virtual mode, which records the same rows as the paced
// demo, and compares its summary with the README's block, so a stale block fails CI.

#include "run/run_scenario.h"
#include "run/run_summary.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string_view>

using namespace fulcrum;

namespace {

std::string read_text(const std::filesystem::path& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

// The fenced block after "The demo ends like this".
std::vector<std::string> readme_demo_block()
{
    const std::string readme = read_text(std::filesystem::path(FULCRUM_SOURCE_DIR) / "README.md");
    const auto intro = readme.find("The demo ends like this");
    if (intro == std::string::npos)
        return {};
    const auto open = readme.find("```\n", intro);
    const auto close = readme.find("\n```", open + 4);
    if (open == std::string::npos || close == std::string::npos)
        return {};
    return lines_of(readme.substr(open + 4, close - open - 4));
}

// "  test accuracy    0.8682 final, ..." → 0.8682
double number_after(const std::string& line, const std::string& label)
{
    return std::stod(line.substr(line.find(label) + label.size()));
}

} // namespace

TEST(ReadmeDemo, TheReadmeShowsWhatTheDemoPrintsToday)
{
    const std::vector<std::string> documented = readme_demo_block();
    ASSERT_EQ(documented.size(), 9u) << "README.md: no 9-line block after 'The demo ends like this'";

    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-readme-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto scenario = scenario::load_scenario(std::string(FULCRUM_SOURCE_DIR) + "/resources/scenarios/demo.json");
    run::RunOptions options;
    options.mode = scenario::Mode::Virtual;
    options.database = dir / "demo.db";
    const run::RunSummary summary = run::run_scenario(scenario, options);
    std::filesystem::remove_all(dir);
    const std::vector<std::string> printed = lines_of(run::to_text(summary));
    ASSERT_EQ(printed.size(), 9u);

    // What the simulated cluster decides is the same on every machine, to the letter.
    EXPECT_EQ(documented[0], printed[0]);
    EXPECT_EQ(documented[1], printed[1]);
    EXPECT_EQ(documented[2], printed[2]);
    EXPECT_EQ(documented[4], printed[4]) << "virtual time";
    // The accuracy comes from float math whose rounding follows the target's vector width
    // (Eigen sums in SSE, AVX2 or AVX-512 registers). The README quotes the portable
    // x86-64-v2 build that CI tests, to the letter; a build for another target lands within
    // a point of it.
    if (std::string_view(FULCRUM_TEST_ARCH) == "x86-64-v2") {
        EXPECT_EQ(documented[3], printed[3]);
    } else {
        EXPECT_NEAR(number_after(documented[3], "test accuracy"), summary.final_accuracy, 0.01) << printed[3];
        EXPECT_NEAR(number_after(documented[3], "final,"), summary.best_accuracy, 0.01) << printed[3];
    }
    // Wall time and the run number depend on the machine and the database: their form only.
    EXPECT_EQ(documented[5].substr(0, 19), printed[5].substr(0, 19));
    EXPECT_EQ(documented[6].substr(0, 19), printed[6].substr(0, 19));
    // Each setting's time per iteration: uniform BSP, then LB-BSP (virtual time, exact).
    EXPECT_EQ(documented[7], printed[7]);
    EXPECT_EQ(documented[8], printed[8]);
}
