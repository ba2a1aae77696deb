#include "daemon/run_catalogue.h"

#include "common/error.h"
#include "daemon/job_journal.h"
#include "daemon/tenancy.h"
#include "db/run_reader.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <sys/stat.h>

namespace fulcrum::daemon {

using namespace protocol;

RunCatalogue::RunCatalogue(const ServerFolders& folders)
    : folders_(folders)
{
}

std::string RunCatalogue::job_store_name(JobId id)
{
    return "job-" + std::to_string(id) + ".db";
}

std::filesystem::path RunCatalogue::job_store(JobId id) const
{
    return folders_.home(FolderKind::Runs) / job_store_name(id);
}

JobId RunCatalogue::first_free_job_id() const
{
    JobId last = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folders_.home(FolderKind::Runs), ec))
        if (const auto job = job_of_file(entry.path().filename().string(), ".db"))
            last = std::max(last, *job);
    return last + 1;
}

// Only a plain file name inside the runs folders: a client cannot reach other files.
std::filesystem::path RunCatalogue::run_store(const std::string& database) const
{
    const std::filesystem::path name(database);
    if (database.empty() || name.has_parent_path() || name.filename() != name || database == "." || database == ".."
        || database.find('\\') != std::string::npos)
        throw RefusedRequest("unknown-run", "'" + database + "' is not a run store name; list-runs gives the names");
    std::filesystem::path path;
    try {
        path = folders_.resolve(FolderKind::Runs, database, "open-replay", "database");
    } catch (const OutsidePath& e) {
        throw RefusedRequest("unknown-run", e.reason() + "; list-runs gives the names");
    }
    if (!std::filesystem::is_regular_file(path))
        throw RefusedRequest("unknown-run", "there is no run store '" + database + "'");
    return path;
}

RunCatalogue::Stamp RunCatalogue::Stamp::of(const std::filesystem::path& store)
{
    Stamp stamp;
    const char* suffixes[] = { "", "-wal", "-journal" };
    for (std::size_t k = 0; k < std::size(suffixes); ++k) {
        struct stat info { };
        if (::stat((store.string() + suffixes[k]).c_str(), &info) != 0)
            continue;
        // A journal's change time moves at every read (SQLite's read-only open changes the
        // WAL's owner to the store's); its size and modification time say when it was written.
        stamp.files[k] = { true, static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
            static_cast<std::uint64_t>(info.st_size), info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec,
            k == 0 ? info.st_ctim.tv_sec * 1'000'000'000LL + info.st_ctim.tv_nsec : 0 };
    }
    return stamp;
}

bool RunCatalogue::Stamp::settled(std::chrono::system_clock::time_point now) const
{
    const std::int64_t before_ns
        = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count() - 1'000'000'000LL;
    // An empty journal holds nothing to read, however new: SQLite makes an empty WAL beside a
    // store it reads. Once written, it is no longer empty, and its times count.
    const auto settled = [&](const File& f, bool journal) {
        return !f.present || (journal && f.size == 0) || (f.modified_ns < before_ns && f.changed_ns < before_ns);
    };
    return settled(files[0], false) && settled(files[1], true) && settled(files[2], true);
}

std::vector<RunListing> RunCatalogue::read_store(const std::filesystem::path& file) const
{
    ++stores_read_;
    const std::string database = file.filename().string();
    std::vector<RunListing> out;
    db::RunReader reader(file);
    for (const db::RunInfo& run : reader.runs()) {
        RunListing l { database, run.id, run.name, run.mode, run.status, run.started_at, run.finished_at };
        l.tenant = recorded_tenant(run.tenant);
        l.jobs = static_cast<int>(reader.jobs(run.id).size());
        l.iterations = reader.iteration_count(run.id);
        l.rows = reader.iteration_row_count(run.id);
        out.push_back(std::move(l));
    }
    return out;
}

std::vector<RunListing> RunCatalogue::runs(std::chrono::system_clock::time_point now) const
{
    std::vector<std::filesystem::path> files;
    std::set<std::string> names;
    for (const auto& folder : folders_.roots(FolderKind::Runs)) {
        std::vector<std::filesystem::path> here;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
            if (entry.is_regular_file() && entry.path().extension() == ".db"
                && ServerFolders::stays_inside(folder, entry.path()) // a planted link is not followed out
                && names.insert(entry.path().filename().string()).second)
                here.push_back(entry.path());
        std::sort(here.begin(), here.end());
        files.insert(files.end(), here.begin(), here.end());
    }
    std::vector<RunListing> out;
    for (const auto& file : files) {
        // SQLite keeps a linked store's journals beside the file the link leads to.
        std::error_code ec;
        std::filesystem::path target = std::filesystem::canonical(file, ec);
        if (ec)
            target = file;
        const Stamp stamp = Stamp::of(target);
        {
            const std::lock_guard lock(listed_mutex_);
            if (const auto kept = listed_.find(file); kept != listed_.end() && kept->second.stamp == stamp) {
                out.insert(out.end(), kept->second.runs.begin(), kept->second.runs.end());
                continue;
            }
        }
        try {
            std::vector<RunListing> runs = read_store(file);
            out.insert(out.end(), runs.begin(), runs.end());
            // Stamped after the read, which adds the WAL SQLite keeps beside a store it reads.
            // A change made while it read is as recent as `now` or more: not settled, not kept;
            // and the store's own file must be as it was before (a clock that file times do
            // not follow, on a network file system, cannot hide a change then).
            const Stamp read = Stamp::of(target);
            const std::lock_guard lock(listed_mutex_);
            if (read.settled(now) && read.files[0] == stamp.files[0])
                listed_[file] = { read, std::move(runs) };
            else
                listed_.erase(file);
        } catch (const std::exception& e) {
            {
                const std::lock_guard lock(listed_mutex_);
                listed_.erase(file);
            }
            RunListing l;
            l.database = file.filename().string();
            l.tenant.clear(); // whose, nobody can tell: listed to tokens reaching every tenant only
            l.status = "unreadable: " + folders_.for_clients(e.what());
            out.push_back(std::move(l));
        }
    }
    const std::set<std::filesystem::path> present(files.begin(), files.end());
    const std::lock_guard lock(listed_mutex_);
    std::erase_if(listed_, [&](const auto& kept) { return !present.contains(kept.first); });
    return out;
}

} // namespace fulcrum::daemon
