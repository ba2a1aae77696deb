#include "ctl/run_export.h"

#include "common/error.h"
#include "ctl/ctl_client.h"
#include "db/run_reader.h"

#include <iomanip>

namespace fulcrum::ctl {

namespace fs = std::filesystem;
using namespace protocol;

namespace {

std::ofstream open_csv(const fs::path& path, const char* header)
{
    std::ofstream out(path);
    if (!out)
        throw InputError(path.string(), "", "cannot be written");
    out << std::setprecision(17) << header << '\n';
    return out;
}

fs::path prepared(const fs::path& folder)
{
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        throw InputError(folder.string(), "", "cannot create the folder: " + ec.message());
    return folder;
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

CsvRunWriter::CsvRunWriter(const fs::path& folder, RunId run, ExportSummary& summary)
    : folder_(folder)
    , summary_(summary)
{
    const std::string prefix = "run-" + std::to_string(run) + "-";
    rows_ = open_csv(folder / (prefix + "iterations.csv"),
        "job,worker,iteration,start_s,end_s,batch_size,compute_s,comm_s,wait_s,cpu_share,memory_share,speed,"
        "predicted_speed,loss,decision,gpu_memory_gb,gpu_memory_share,gpu_utilization");
    evaluations_ = open_csv(
        folder / (prefix + "evaluations.csv"), "job,iteration,time_s,wall_s,epoch,train_loss,test_loss,test_accuracy");
    events_ = open_csv(folder / (prefix + "events.csv"), "job,iteration,time_s,kind,worker,actor,message");
    ++summary_.runs;
}

void CsvRunWriter::row(const IterationRecord& r)
{
    rows_ << r.job << ',' << r.worker << ',' << r.iteration << ',' << r.start_s << ',' << r.end_s << ',' << r.batch_size
          << ',' << r.compute_s << ',' << r.comm_s << ',' << r.wait_s << ',' << r.cpu_share << ',' << r.memory_share
          << ',' << r.speed << ',';
    if (r.predicted_speed)
        rows_ << *r.predicted_speed;
    rows_ << ',' << r.loss << ',' << csv_cell(r.decision);
    for (const std::optional<double>& v : { r.gpu.memory_gb, r.gpu.memory_share, r.gpu.utilization }) {
        rows_ << ',';
        if (v)
            rows_ << *v;
    }
    rows_ << '\n';
    ++summary_.iteration_rows;
}

void CsvRunWriter::evaluation(const EvaluationRecord& e)
{
    evaluations_ << e.job << ',' << e.iteration << ',' << e.time_s << ',' << e.wall_s << ',' << e.epoch << ','
                 << e.train_loss << ',' << e.test_loss << ',' << e.test_accuracy << '\n';
    ++summary_.evaluations;
}

void CsvRunWriter::event(const EventRecord& e)
{
    events_ << e.job << ',' << e.iteration << ',' << e.time_s << ',' << csv_cell(e.kind) << ',';
    if (e.worker)
        events_ << *e.worker;
    events_ << ',' << csv_cell(e.actor) << ',' << csv_cell(e.message) << '\n';
    ++summary_.events;
}

void CsvRunWriter::finish()
{
    for (auto* out : { &rows_, &evaluations_, &events_ })
        if (!out->flush())
            throw InputError(folder_.string(), "", "a CSV file could not be written completely");
}

ExportSummary export_run_store(const fs::path& store, std::optional<RunId> run, const fs::path& folder)
{
    if (!fs::exists(store))
        throw InputError(store.string(), "", "no such run store");
    db::RunReader reader(store);
    ExportSummary summary;
    summary.folder = prepared(folder);
    const auto runs = reader.runs();
    bool found = false;
    for (const db::RunInfo& info : runs) {
        if (run && info.id != *run)
            continue;
        found = true;
        CsvRunWriter out(folder, info.id, summary);
        for (const db::JobInfo& job : reader.jobs(info.id)) {
            for (const IterationRecord& r : reader.iterations(info.id, job.id))
                out.row(r);
            for (const EvaluationRecord& e : reader.evaluations(info.id, job.id))
                out.evaluation(e);
        }
        for (const EventRecord& e : reader.events(info.id))
            out.event(e);
        out.finish();
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

ExportSummary export_served_run(CtlClient& client, const std::string& database, RunId run, const fs::path& folder)
{
    ExportSummary summary;
    summary.folder = prepared(folder);
    OpenReplay open;
    open.database = database;
    open.run = run;
    open.speed = 0; // as fast as this client reads; a replay never drops what it sends
    const Reply reply = client.request(open);
    const std::int64_t replay = reply.replay.value_or(0);
    CsvRunWriter out(folder, run, summary);
    for (;;) {
        const auto message = client.next();
        if (!message)
            throw CtlError(kUnreachable, "fulcrumd closed the connection during the export");
        if (const auto* rows = std::get_if<IterationRows>(&*message); rows && rows->replay == replay) {
            for (const IterationRecord& r : rows->rows)
                out.row(r);
        } else if (const auto* e = std::get_if<Evaluation>(&*message); e && e->replay == replay) {
            out.evaluation(e->evaluation);
        } else if (const auto* ev = std::get_if<Event>(&*message); ev && ev->replay == replay) {
            out.event(ev->event);
        } else if (const auto* state = std::get_if<ReplayState>(&*message); state && state->replay == replay) {
            if (state->state == ReplayPhase::Finished)
                break;
            if (state->state == ReplayPhase::Closed)
                throw CtlError(kFailed, "fulcrumd closed the replay before its end");
        }
    }
    out.finish();
    return summary;
}

} // namespace fulcrum::ctl
