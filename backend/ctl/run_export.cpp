#include "ctl/run_export.h"

#include "common/error.h"
#include "db/run_reader.h"

#include <fstream>
#include <iomanip>

namespace fulcrum::ctl {

namespace fs = std::filesystem;

namespace {

std::ofstream open_csv(const fs::path& path, const char* header)
{
    std::ofstream out(path);
    if (!out)
        throw InputError(path.string(), "", "cannot be written");
    out << std::setprecision(10) << header << '\n';
    return out;
}

} // namespace

std::string csv_cell(const std::string& text)
{
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"')
            quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

ExportSummary export_run_store(const fs::path& store, std::optional<RunId> run, const fs::path& folder)
{
    if (!fs::exists(store))
        throw InputError(store.string(), "", "no such run store");
    db::RunReader reader(store);
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        throw InputError(folder.string(), "", "cannot create the folder: " + ec.message());
    ExportSummary summary;
    summary.folder = folder;
    const auto runs = reader.runs();
    bool found = false;
    for (const db::RunInfo& info : runs) {
        if (run && info.id != *run)
            continue;
        found = true;
        ++summary.runs;
        const std::string prefix = "run-" + std::to_string(info.id) + "-";
        auto rows = open_csv(folder / (prefix + "iterations.csv"),
            "job,worker,iteration,start_s,end_s,batch_size,compute_s,comm_s,wait_s,cpu_share,memory_share,speed,"
            "predicted_speed,loss,decision");
        auto evaluations = open_csv(folder / (prefix + "evaluations.csv"),
            "job,iteration,time_s,wall_s,epoch,train_loss,test_loss,test_accuracy");
        for (const db::JobInfo& job : reader.jobs(info.id)) {
            for (const IterationRecord& r : reader.iterations(info.id, job.id)) {
                rows << r.job << ',' << r.worker << ',' << r.iteration << ',' << r.start_s << ',' << r.end_s << ','
                     << r.batch_size << ',' << r.compute_s << ',' << r.comm_s << ',' << r.wait_s << ',' << r.cpu_share
                     << ',' << r.memory_share << ',' << r.speed << ',';
                if (r.predicted_speed)
                    rows << *r.predicted_speed;
                rows << ',' << r.loss << ',' << csv_cell(r.decision) << '\n';
                ++summary.iteration_rows;
            }
            for (const EvaluationRecord& e : reader.evaluations(info.id, job.id)) {
                evaluations << e.job << ',' << e.iteration << ',' << e.time_s << ',' << e.wall_s << ',' << e.epoch
                            << ',' << e.train_loss << ',' << e.test_loss << ',' << e.test_accuracy << '\n';
                ++summary.evaluations;
            }
        }
        auto events = open_csv(folder / (prefix + "events.csv"), "job,iteration,time_s,kind,worker,actor,message");
        for (const EventRecord& e : reader.events(info.id)) {
            events << e.job << ',' << e.iteration << ',' << e.time_s << ',' << csv_cell(e.kind) << ',';
            if (e.worker)
                events << *e.worker;
            events << ',' << csv_cell(e.actor) << ',' << csv_cell(e.message) << '\n';
            ++summary.events;
        }
        for (auto* out : { &rows, &evaluations, &events })
            if (!out->flush())
                throw InputError(folder.string(), "", "a CSV file could not be written completely");
    }
    if (run && !found) {
        std::string ids;
        for (const db::RunInfo& info : runs)
            ids += (ids.empty() ? "" : ", ") + std::to_string(info.id);
        throw InputError(store.string(), "run",
            "has no run " + std::to_string(*run) + " (its runs: " + (ids.empty() ? "none" : ids) + ")");
    }
    return summary;
}

} // namespace fulcrum::ctl
