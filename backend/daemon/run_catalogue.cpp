#include "daemon/run_catalogue.h"

#include "common/error.h"
#include "daemon/job_journal.h"
#include "daemon/tenancy.h"
#include "db/run_reader.h"

#include <algorithm>
#include <set>

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

std::vector<RunListing> RunCatalogue::runs() const
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
        const std::string database = file.filename().string();
        try {
            db::RunReader reader(file);
            for (const db::RunInfo& run : reader.runs()) {
                RunListing l { database, run.id, run.name, run.mode, run.status, run.started_at, run.finished_at };
                l.tenant = recorded_tenant(run.tenant);
                l.jobs = static_cast<int>(reader.jobs(run.id).size());
                l.iterations = reader.iteration_count(run.id);
                l.rows = reader.iteration_row_count(run.id);
                out.push_back(std::move(l));
            }
        } catch (const std::exception& e) {
            RunListing l;
            l.database = database;
            l.tenant.clear(); // whose, nobody can tell: listed to tokens reaching every tenant only
            l.status = "unreadable: " + folders_.for_clients(e.what());
            out.push_back(std::move(l));
        }
    }
    return out;
}

} // namespace fulcrum::daemon
