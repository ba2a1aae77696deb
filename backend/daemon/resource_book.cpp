#include "daemon/resource_book.h"

#include "scenario/job_footprint.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

namespace fulcrum::daemon {

using scenario::bytes_text;
using scenario::JobFootprint;

double default_memory_budget()
{
    const double pages = static_cast<double>(::sysconf(_SC_PHYS_PAGES));
    double least = pages * static_cast<double>(::sysconf(_SC_PAGESIZE));
    if (std::ifstream cgroup("/sys/fs/cgroup/memory.max"); cgroup) {
        std::string limit;
        cgroup >> limit;
        if (!limit.empty() && limit != "max")
            least = std::min(least, std::stod(limit));
    }
    for (const int resource : { RLIMIT_AS, RLIMIT_DATA }) {
        rlimit r {};
        if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
            least = std::min(least, static_cast<double>(r.rlim_cur));
    }
    return 0.75 * least;
}

double parse_byte_size(const std::string& text)
{
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::string unit = text.substr(used);
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
    if (unit.size() > 1 && unit.back() == 'b')
        unit.pop_back(); // "GB", "GiB" as "G"
    if (unit.size() > 1 && unit.back() == 'i')
        unit.pop_back();
    const std::string units = "kmgt";
    double scale = 1;
    if (unit.size() == 1 && units.find(unit[0]) != std::string::npos)
        for (std::size_t i = 0; i <= units.find(unit[0]); ++i)
            scale *= 1024;
    else if (!unit.empty())
        used = 0;
    if (used == 0 || !(value > 0))
        throw std::invalid_argument(
            "'" + text + "' is not a size: expected a positive number of bytes, or one with K, M, G or T (\"6G\")");
    return value * scale;
}

ResourceBook::ResourceBook(ResourceBudget budget)
    : budget_(budget)
{
}

double ResourceBook::added_bytes(const JobFootprint& f) const
{
    const bool shared = !f.data_key.empty() && data_readers_.contains(f.data_key);
    return f.own_bytes() + (shared ? 0 : f.data_bytes);
}

ResourceBook::Refusal ResourceBook::impossible(const JobFootprint& f) const
{
    if (f.own_bytes() + f.data_bytes > budget_.memory_bytes)
        return { f.dominant_field(),
            "needs an estimated " + f.describe() + ", more than fulcrumd's memory budget of "
                + bytes_text(budget_.memory_bytes) + " (--memory-budget)" };
    if (f.threads > budget_.threads)
        return { "workers",
            "needs " + std::to_string(f.threads) + " threads, more than fulcrumd's " + std::to_string(budget_.threads)
                + " (--max-threads)" };
    return {};
}

std::string ResourceBook::wait_reason(const JobFootprint& f) const
{
    const double held = held_bytes();
    if (held + added_bytes(f) > budget_.memory_bytes)
        return "waiting for memory: it needs an estimated " + bytes_text(added_bytes(f)) + " and the running jobs hold "
            + bytes_text(held) + " of fulcrumd's " + bytes_text(budget_.memory_bytes) + " (--memory-budget)";
    if (held_threads() + f.threads > budget_.threads)
        return "waiting for threads: it needs " + std::to_string(f.threads) + " and the running jobs hold "
            + std::to_string(held_threads()) + " of fulcrumd's " + std::to_string(budget_.threads) + " (--max-threads)";
    return {};
}

void ResourceBook::hold(JobId job, const JobFootprint& f)
{
    if (held_.contains(job))
        return;
    held_[job] = Held { f.own_bytes(), f.data_bytes, f.data_key, f.threads };
    if (!f.data_key.empty())
        ++data_readers_[f.data_key];
}

void ResourceBook::release(JobId job)
{
    const auto it = held_.find(job);
    if (it == held_.end())
        return;
    if (const auto readers = data_readers_.find(it->second.data_key);
        readers != data_readers_.end() && --readers->second == 0)
        data_readers_.erase(readers);
    held_.erase(it);
}

double ResourceBook::held_bytes() const
{
    double bytes = 0;
    std::map<std::string, double> data;
    for (const auto& [job, f] : held_) {
        bytes += f.own_bytes;
        if (!f.data_key.empty())
            data[f.data_key] = f.data_bytes;
    }
    for (const auto& [key, b] : data)
        bytes += b;
    return bytes;
}

int ResourceBook::held_threads() const
{
    int threads = 0;
    for (const auto& [job, f] : held_)
        threads += f.threads;
    return threads;
}

} // namespace fulcrum::daemon
