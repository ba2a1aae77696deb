#include "archive/run_catalogue.h"

#include "access/tenancy.h"
#include "archive/job_files.h"
#include "common/error.h"
#include "db/run_reader.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <sys/stat.h>
#include <unordered_set>

namespace fulcrum::archive {

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

bool RunCatalogue::Listed::serves(const Stamp& now_stamp, std::chrono::system_clock::time_point now) const
{
    if (settled && stamp == now_stamp)
        return true;
    const Stamp::File& was = stamp.files[0];
    const Stamp::File& is = now_stamp.files[0];
    const bool same_file = was.present && is.present && was.device == is.device && was.inode == is.inode;
    return running && same_file && now >= read_at && now - read_at < kLiveRefresh;
}

void RunCatalogue::run_ended(const std::filesystem::path& store) const
{
    const std::lock_guard lock(listed_mutex_);
    ++ends_[store.native()];
    listed_.erase(store.native());
}

std::vector<RunListing> RunCatalogue::read_store(const std::filesystem::path& file, const std::string& database) const
{
    ++stores_read_;
    std::vector<RunListing> out;
    db::RunReader reader(file);
    for (const db::RunInfo& run : reader.runs()) {
        RunListing l { database, run.id, run.name, run.mode, run.status, run.started_at, run.finished_at };
        l.tenant = access::recorded_tenant(run.tenant);
        l.jobs = static_cast<int>(reader.jobs(run.id).size());
        const db::RunReader::IterationTotals totals = reader.iteration_totals(run.id);
        l.iterations = totals.iterations;
        l.rows = totals.rows;
        out.push_back(std::move(l));
    }
    return out;
}

void RunCatalogue::list(Answer answer, const Post& post_next) const
{
    {
        const std::lock_guard lock(passes_mutex_);
        waiting_.push_back(std::move(answer));
        if (pass_running_)
            return;
        pass_running_ = true;
    }
    run_passes(post_next);
}

void RunCatalogue::run_passes(const Post& post_next) const
{
    for (;;) {
        std::vector<Answer> answers;
        {
            const std::lock_guard lock(passes_mutex_);
            answers.swap(waiting_);
        }
        std::vector<RunListing> listed;
        std::exception_ptr error;
        try {
            listed = runs();
        } catch (...) {
            error = std::current_exception();
        }
        ++passes_;
        for (const Answer& a : answers) {
            try {
                a(error ? nullptr : &listed, error);
            } catch (...) {
                // that client's failure; the others are answered all the same
            }
        }
        {
            const std::lock_guard lock(passes_mutex_);
            if (waiting_.empty()) {
                pass_running_ = false;
                return;
            }
        }
        if (post_next) {
            try {
                post_next([this, post_next] { run_passes(post_next); });
                return;
            } catch (...) {
                // no queue to hand it to: the next pass runs here
            }
        }
    }
}

std::vector<RunListing> RunCatalogue::runs(std::chrono::system_clock::time_point now) const
{
    // Each store's name in its folder, and the file it is (a link's target: SQLite keeps a
    // linked store's journals beside the file the link leads to).
    std::vector<std::pair<std::filesystem::path, std::filesystem::path>> files;
    std::set<std::string> names;
    for (const auto& folder : folders_.roots(FolderKind::Runs)) {
        std::vector<std::pair<std::filesystem::path, std::filesystem::path>> here;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
            if (entry.path().extension() != ".db")
                continue;
            std::optional<std::filesystem::path> target = ServerFolders::listed_file(folder, entry);
            if (target && names.insert(entry.path().filename().string()).second)
                here.emplace_back(entry.path(), std::move(*target));
        }
        // By name (one folder's paths differ in their last component only).
        std::sort(
            here.begin(), here.end(), [](const auto& a, const auto& b) { return a.first.native() < b.first.native(); });
        files.insert(files.end(), here.begin(), here.end());
    }
    std::vector<RunListing> out;
    for (const auto& [file, target] : files) {
        const Stamp stamp = Stamp::of(target);
        std::uint64_t ends = 0; // run_ended() said of it before this read
        {
            const std::lock_guard lock(listed_mutex_);
            if (const auto kept = listed_.find(file.native());
                kept != listed_.end() && kept->second.serves(stamp, now)) {
                out.insert(out.end(), kept->second.runs.begin(), kept->second.runs.end());
                continue;
            }
            if (const auto ended = ends_.find(file.native()); ended != ends_.end())
                ends = ended->second;
        }
        try {
            // The file the check found, not the entry again: a link put in the entry's place
            // since is not followed.
            std::vector<RunListing> runs = read_store(target, file.filename().string());
            out.insert(out.end(), runs.begin(), runs.end());
            // Stamped after the read, which adds the WAL SQLite keeps beside a store it reads.
            // A change made while it read is as recent as `now` or more: not settled, not kept
            // by its stamp; and the store's own file must be as it was before (a clock that
            // file times do not follow, on a network file system, cannot hide a change then).
            const Stamp read = Stamp::of(target);
            const bool settled = read.settled(now) && read.files[0] == stamp.files[0];
            const bool running
                = std::any_of(runs.begin(), runs.end(), [](const RunListing& l) { return l.status == "running"; });
            const std::lock_guard lock(listed_mutex_);
            const auto ended = ends_.find(file.native());
            const bool ended_meanwhile = ended != ends_.end() && ended->second != ends;
            if ((settled || running) && !ended_meanwhile)
                listed_[file.native()] = { read, settled, running, now, std::move(runs) };
            else
                listed_.erase(file.native());
        } catch (const std::exception& e) {
            {
                const std::lock_guard lock(listed_mutex_);
                listed_.erase(file.native());
            }
            RunListing l;
            l.database = file.filename().string();
            l.tenant.clear(); // whose, nobody can tell: listed to tokens reaching every tenant only
            l.status = "unreadable: " + folders_.for_clients(e.what());
            out.push_back(std::move(l));
        }
    }
    std::unordered_set<std::string> present;
    for (const auto& listed : files)
        present.insert(listed.first.native());
    const std::lock_guard lock(listed_mutex_);
    std::erase_if(listed_, [&](const auto& kept) { return !present.contains(kept.first); });
    std::erase_if(ends_, [&](const auto& ended) { return !present.contains(ended.first); });
    return out;
}

} // namespace fulcrum::archive
