#include "daemon/job_journal.h"

#include "archive/job_files.h"
#include "common/error.h"
#include "common/file_text.h"
#include "log/log.h"
#include "protocol/token_file.h"

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <unistd.h>

namespace fulcrum::daemon {

using archive::job_of_file;
using archive::kMaxJobId;

namespace {

constexpr const char* kLocal = "local";
constexpr const char* kLastJob = "last-job";
constexpr const char* kClient = "client";
constexpr std::string_view kTenantPrefix = "tenant=";

// The whole text, however many writes the kernel takes for it.
bool write_all(int fd, std::string_view text)
{
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// `text` in a new file of fulcrumd's own at `path`, on the disk (fsynced) when this returns
// true.
bool write_synced(const std::filesystem::path& path, std::string_view text)
{
    const int out = create_own_file(path);
    if (out < 0)
        return false;
    const bool written = write_all(out, text) && ::fsync(out) == 0;
    ::close(out);
    return written;
}

} // namespace

JobJournal::JobJournal(std::filesystem::path folder)
    : folder_(std::move(folder))
{
    std::error_code ec;
    std::filesystem::create_directories(folder_, ec);
    if (ec)
        throw InputError(folder_.string(), "", "cannot create the job journal's folder: " + ec.message());
    last_ = last_added();
}

JobId JobJournal::last_added() const
{
    const std::filesystem::path marker = folder_ / kLastJob;
    std::error_code ec;
    if (!std::filesystem::exists(marker, ec))
        return 0; // none yet
    // Damaged: ignored, the entries and the run stores still keep their ids.
    const auto ignored = [&](const std::string& why) {
        log::warning("job id marker ignored", { { "path", marker.string() }, { "reason", why } });
        return JobId { 0 };
    };
    std::istringstream in;
    try {
        in.str(read_file_text(marker, 64));
    } catch (const InputError& e) {
        return ignored(e.reason());
    }
    long long last = 0;
    if (!(in >> last) || last < 0 || last >= kMaxJobId)
        return ignored("expected a job id from 0 to " + std::to_string(kMaxJobId - 1));
    return static_cast<JobId>(last);
}

std::filesystem::path JobJournal::file(JobId job) const
{
    return folder_ / ("job-" + std::to_string(job) + ".json");
}

void JobJournal::add(JobId job, Origin origin, const std::string& tenant, const std::string& scenario_json)
{
    const std::filesystem::path target = file(job);
    const std::filesystem::path partial = target.string() + ".partial";
    // The default tenant's entry is the last release's, which that release can still read.
    std::string text = origin == Origin::Local ? kLocal : kClient;
    if (tenant != protocol::kDefaultTenant)
        text += " " + std::string(kTenantPrefix) + tenant;
    text += "\n" + scenario_json;
    if (!write_synced(partial, text))
        throw RuntimeFailure(partial.string() + ": the disk refused the job's scenario");
    std::error_code ec;
    std::filesystem::rename(partial, target, ec);
    if (ec)
        throw RuntimeFailure(target.string() + ": " + ec.message());
    // The marker follows the entry, on the disk before the entry can be removed (a job
    // cancelled while queued leaves no other trace of its id).
    std::lock_guard lock(last_mutex_);
    if (job <= last_)
        return;
    const std::filesystem::path marker = folder_ / kLastJob;
    const std::filesystem::path marker_partial = marker.string() + ".partial";
    const bool written = write_synced(marker_partial, std::to_string(job) + "\n");
    if (written)
        std::filesystem::rename(marker_partial, marker, ec);
    if (!written || ec) {
        // The entry is written, and the job goes on; only its id could be given again after
        // a restart, if the job leaves no run store.
        log::warning("job id marker not written",
            { { "path", marker.string() }, { "job", static_cast<std::int64_t>(job) },
                { "reason", written ? ec.message() : std::string("the disk refused it") } });
        return;
    }
    last_ = job;
}

void JobJournal::remove(JobId job)
{
    std::error_code ec;
    std::filesystem::remove(file(job), ec);
}

std::vector<JobJournal::Entry> JobJournal::entries(std::vector<std::string>* problems) const
{
    std::vector<Entry> out;
    std::error_code ec;
    for (const auto& item : std::filesystem::directory_iterator(folder_, ec)) {
        const std::string name = item.path().filename().string();
        const std::optional<JobId> job = job_of_file(name, ".json");
        if (!job)
            continue;
        std::istringstream in;
        try {
            in.str(read_file_text(item.path(), kMaxStateFileBytes));
        } catch (const InputError& e) {
            if (problems)
                problems->push_back(name + ": " + e.reason());
            continue;
        }
        std::string origin;
        std::getline(in, origin);
        std::stringstream rest;
        rest << in.rdbuf();
        std::string tenant(protocol::kDefaultTenant);
        if (const auto space = origin.find(' '); space != std::string::npos) {
            tenant = origin.substr(space + 1);
            origin.erase(space);
            if (!tenant.starts_with(kTenantPrefix)
                || !protocol::valid_tenant_name(tenant.erase(0, kTenantPrefix.size()))) {
                if (problems)
                    problems->push_back(name + ": not a job journal entry (its first line names no tenant after '"
                        + origin + "': expected 'tenant=T')");
                continue;
            }
        }
        if (origin != kLocal && origin != kClient) {
            if (problems)
                problems->push_back(
                    name + ": not a job journal entry (its first line is neither 'local' nor 'client')");
            continue;
        }
        out.push_back({ *job, origin == kLocal ? Origin::Local : Origin::Client, std::move(tenant), rest.str() });
    }
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.job < b.job; });
    return out;
}

} // namespace fulcrum::daemon
