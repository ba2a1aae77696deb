#include "ui/models/workers_model.h"

#include <algorithm>

namespace fulcrum::ui {

void WorkersModel::show_job(JobId job)
{
    beginResetModel();
    job_ = job;
    rows_.clear();
    endResetModel();
}

void WorkersModel::clear()
{
    beginResetModel();
    job_.reset();
    rows_.clear();
    endResetModel();
}

WorkersModel::Row& WorkersModel::row_for(WorkerId worker)
{
    const auto needed = static_cast<std::size_t>(worker) + 1;
    if (rows_.size() < needed) {
        beginInsertRows({}, static_cast<int>(rows_.size()), static_cast<int>(needed) - 1);
        const std::size_t first = rows_.size();
        rows_.resize(needed);
        for (std::size_t i = first; i < needed; ++i)
            rows_[i].state.worker = static_cast<WorkerId>(i);
        endInsertRows();
    }
    return rows_[static_cast<std::size_t>(worker)];
}

void WorkersModel::apply(const protocol::WorkerUpdate& update)
{
    if (update.job != job_)
        return;
    for (const protocol::WorkerState& w : update.workers)
        if (w.worker >= 0)
            row_for(w.worker).state = w;
    if (!rows_.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void WorkersModel::apply(const protocol::IterationRows& rows)
{
    if (rows.job != job_)
        return;
    for (const IterationRecord& r : rows.rows)
        if (r.worker >= 0)
            row_for(r.worker).last = r;
    if (!rows_.empty())
        emit dataChanged(index(0, BatchSize), index(rowCount() - 1, GpuUtilization));
}

const protocol::WorkerState* WorkersModel::state(WorkerId worker) const
{
    return worker >= 0 && static_cast<std::size_t>(worker) < rows_.size()
        ? &rows_[static_cast<std::size_t>(worker)].state
        : nullptr;
}

const IterationRecord* WorkersModel::last_row(WorkerId worker) const
{
    if (worker < 0 || static_cast<std::size_t>(worker) >= rows_.size() || !rows_[static_cast<std::size_t>(worker)].last)
        return nullptr;
    return &*rows_[static_cast<std::size_t>(worker)].last;
}

bool WorkersModel::has_gpu_workers() const
{
    return std::any_of(rows_.begin(), rows_.end(),
        [](const Row& row) { return row.state.device != "cpu" || (row.last && row.last->gpu != GpuUse {}); });
}

QString WorkersModel::gpu_memory_text(const GpuUse& use)
{
    QStringList parts;
    if (use.memory_gb)
        parts << QStringLiteral("%1 GB").arg(*use.memory_gb, 0, 'f', 2);
    if (use.memory_share)
        parts << QStringLiteral("%1 %").arg(100 * *use.memory_share, 0, 'f', 0);
    return parts.join(QStringLiteral(" · "));
}

int WorkersModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int WorkersModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString WorkersModel::state_text(const protocol::WorkerState& s)
{
    QStringList parts;
    if (!s.member)
        parts << QStringLiteral("left the job");
    if (s.excluded)
        parts << (s.excluded_until ? QStringLiteral("excluded until %1 s (run clock)").arg(*s.excluded_until, 0, 'f', 1)
                                   : QStringLiteral("excluded"));
    if (s.pinned)
        parts << QStringLiteral("pinned at %1").arg(*s.pinned);
    if (s.slowdown > 1)
        parts << QStringLiteral("straggler ×%1").arg(s.slowdown, 0, 'g', 3);
    if (s.stalled_since)
        parts << QStringLiteral("stalled since %1 s, predicted %2 s")
                     .arg(*s.stalled_since, 0, 'f', 1)
                     .arg(s.predicted_s, 0, 'g', 3);
    return parts.join(QStringLiteral(", "));
}

QVariant WorkersModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size()))
        return {};
    const Row& row = rows_[static_cast<std::size_t>(index.row())];
    const IterationRecord* r = row.last ? &*row.last : nullptr;
    if (role == Qt::ToolTipRole)
        return tooltip(index.column(), row.state, r);
    if (role == kSortRole)
        return sort_key(index.column(), row.state, r);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Worker:
        return row.state.worker;
    case Name:
        return QString::fromStdString(row.state.name);
    case Device:
        return row.state.sms
            ? QStringLiteral("%1 · %2 SMs").arg(QString::fromStdString(row.state.device)).arg(*row.state.sms)
            : QString::fromStdString(row.state.device);
    case BatchSize:
        return r ? QVariant(r->batch_size) : QVariant(row.state.batch_size);
    case BatchTime:
        return r ? QStringLiteral("%1 ms").arg(1000 * (r->compute_s + r->comm_s), 0, 'f', 1) : QString();
    case Wait: {
        if (!r)
            return QString();
        const double iteration_s = r->compute_s + r->comm_s + r->wait_s;
        return QStringLiteral("%1 ms · %2 %")
            .arg(1000 * r->wait_s, 0, 'f', 1)
            .arg(iteration_s > 0 ? 100 * r->wait_s / iteration_s : 0.0, 0, 'f', 0);
    }
    case Speed:
        return r ? QStringLiteral("%1/s").arg(r->speed, 0, 'f', 0) : QString();
    case PredictedSpeed:
        return r && r->predicted_speed ? QStringLiteral("%1/s").arg(*r->predicted_speed, 0, 'f', 0) : QString();
    case Cpu:
        return r ? QStringLiteral("%1 %").arg(100 * r->cpu_share, 0, 'f', 0) : QString();
    case Memory:
        return r ? QStringLiteral("%1 %").arg(100 * r->memory_share, 0, 'f', 0) : QString();
    case GpuMemory:
        return r ? gpu_memory_text(r->gpu) : QString();
    case GpuUtilization:
        return r && r->gpu.utilization ? QStringLiteral("%1 %").arg(100 * *r->gpu.utilization, 0, 'f', 0) : QString();
    case State:
        return state_text(row.state);
    default:
        return {};
    }
}

QVariant WorkersModel::sort_key(int column, const protocol::WorkerState& state, const IterationRecord* r)
{
    // A worker with no row yet sorts as the least: last when the slowest come first.
    const auto of_row = [r](auto value) { return r ? QVariant(static_cast<double>(value(*r))) : QVariant(-1.0); };
    switch (column) {
    case Worker:
        return state.worker;
    case Name:
        return QString::fromStdString(state.name);
    case Device:
        return QString::fromStdString(state.device);
    case BatchSize:
        return r ? r->batch_size : state.batch_size;
    case BatchTime: // the straggler's is the longest: "stragglers first" sorts on it
        return of_row([](const IterationRecord& x) { return x.compute_s + x.comm_s; });
    case Wait:
        return of_row([](const IterationRecord& x) {
            const double iteration_s = x.compute_s + x.comm_s + x.wait_s;
            return iteration_s > 0 ? x.wait_s / iteration_s : 0.0;
        });
    case Speed:
        return of_row([](const IterationRecord& x) { return x.speed; });
    case PredictedSpeed:
        return of_row([](const IterationRecord& x) { return x.predicted_speed.value_or(-1.0); });
    case Cpu:
        return of_row([](const IterationRecord& x) { return x.cpu_share; });
    case Memory:
        return of_row([](const IterationRecord& x) { return x.memory_share; });
    case GpuMemory:
        return of_row([](const IterationRecord& x) { return x.gpu.memory_gb.value_or(-1.0); });
    case GpuUtilization:
        return of_row([](const IterationRecord& x) { return x.gpu.utilization.value_or(-1.0); });
    case State:
        return state_text(state);
    default:
        return {};
    }
}

QVariant WorkersModel::tooltip(int column, const protocol::WorkerState& state, const IterationRecord* r)
{
    const QString device = QString::fromStdString(state.device);
    switch (column) {
    case Device:
        return state.device == "cpu"
            ? QStringLiteral("Computes its gradients on the CPU")
            : QStringLiteral("Computes its gradients on %1%2. In the virtual and paced modes its batch time still "
                             "comes from its performance model; in the real mode CUDA events time it")
                  .arg(device,
                      state.sms ? QStringLiteral(", on %1 of its SMs (a green context; the job's gpu-device event says "
                                                 "how many it got, or why it shares the whole GPU)")
                                      .arg(*state.sms)
                                : QString());
    case GpuMemory:
        if (!r || (!r->gpu.memory_gb && !r->gpu.memory_share))
            return QStringLiteral("No GPU reading: a CPU worker, or nothing measured its device");
        return QStringLiteral("This worker's own buffers on its GPU: %1 GB.\nThe device's memory in use by every "
                              "process: %2 %.\nLB-BSP Algorithm 2 grows a worker's batch only while its device is at "
                              "most 95 % full. The virtual modes show the performance model's memory.")
            .arg(r->gpu.memory_gb.value_or(0), 0, 'f', 3)
            .arg(100 * r->gpu.memory_share.value_or(0), 0, 'f', 1);
    case GpuUtilization:
        return r && r->gpu.utilization
            ? QStringLiteral(
                "NVML: a kernel ran on the device %1 % of its last sample period (every process's kernels)")
                  .arg(100 * *r->gpu.utilization, 0, 'f', 0)
            : QStringLiteral("No utilisation: NVML (libnvidia-ml.so.1, part of the NVIDIA driver) was not there, the "
                             "worker is on the CPU, or the run is virtual");
    default:
        return {};
    }
}

QVariant WorkersModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Wait:
            return QStringLiteral("How long the worker waited for the slowest one in its latest iteration, and "
                                  "the share of that iteration it spent waiting (fulcrumctl watch's wait s and wait): "
                                  "LB-BSP drives the spread of these shares down");
        case PredictedSpeed:
            return QStringLiteral("The speed the policy predicts for the worker's next batch (samples per second; "
                                  "empty where the policy predicts none, as uniform)");
        case Cpu:
            return QStringLiteral("The share of the worker's batch time its thread or process spent on a CPU "
                                  "(LB-BSP Algorithm 1's c): below 100 % it waited for a core it shares");
        case Device:
            return QStringLiteral("Where the worker computes: cpu or cuda:N");
        case GpuMemory:
            return QStringLiteral("The worker's own GPU memory · the device's memory in use (all processes)");
        case GpuUtilization:
            return QStringLiteral("The device's utilisation as NVML samples it");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    static const char* const kNames[ColumnCount] = { "Worker", "Name", "Device", "Batch size", "Batch time", "Wait",
        "Speed", "Predicted", "CPU", "Memory", "GPU memory", "GPU use", "State" };
    return QString::fromLatin1(kNames[section]);
}

} // namespace fulcrum::ui
