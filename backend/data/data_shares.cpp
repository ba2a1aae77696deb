#include "data/data_shares.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace fulcrum::data {

namespace {

using Ranges = std::vector<SampleRange>;

std::int64_t total(const Ranges& ranges)
{
    std::int64_t n = 0;
    for (const auto& r : ranges)
        n += r.size();
    return n;
}

// Sorted, disjoint, with touching ranges merged.
Ranges normalized(Ranges ranges)
{
    std::sort(
        ranges.begin(), ranges.end(), [](const SampleRange& a, const SampleRange& b) { return a.begin < b.begin; });
    Ranges out;
    for (const auto& r : ranges) {
        if (r.size() <= 0)
            continue;
        if (!out.empty() && r.begin <= out.back().end)
            out.back().end = std::max(out.back().end, r.end);
        else
            out.push_back(r);
    }
    return out;
}

Ranges united(Ranges a, const Ranges& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return normalized(std::move(a));
}

Ranges intersection(const Ranges& a, const Ranges& b)
{
    Ranges out;
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const std::int64_t lo = std::max(a[i].begin, b[j].begin), hi = std::min(a[i].end, b[j].end);
        if (lo < hi)
            out.push_back({ lo, hi });
        (a[i].end < b[j].end) ? ++i : ++j;
    }
    return out;
}

Ranges difference(const Ranges& a, const Ranges& b)
{
    Ranges out;
    std::size_t j = 0;
    for (SampleRange r : a) {
        while (j < b.size() && b[j].end <= r.begin)
            ++j;
        for (std::size_t k = j; k < b.size() && b[k].begin < r.end; ++k) {
            if (b[k].begin > r.begin)
                out.push_back({ r.begin, b[k].begin });
            r.begin = std::max(r.begin, b[k].end);
        }
        if (r.begin < r.end)
            out.push_back(r);
    }
    return out;
}

// The last `count` samples of a set of ranges.
Ranges tail(const Ranges& ranges, std::int64_t count)
{
    Ranges out;
    for (auto it = ranges.rbegin(); it != ranges.rend() && count > 0; ++it) {
        const std::int64_t take = std::min(count, it->size());
        out.push_back({ it->end - take, it->end });
        count -= take;
    }
    return normalized(std::move(out));
}

// The first `count` samples of a set of ranges.
Ranges head(const Ranges& ranges, std::int64_t count)
{
    Ranges out;
    for (const auto& r : ranges) {
        if (count <= 0)
            break;
        const std::int64_t take = std::min(count, r.size());
        out.push_back({ r.begin, r.begin + take });
        count -= take;
    }
    return out;
}

} // namespace

DataShares::DataShares(std::int64_t samples, int workers)
    : samples_(samples)
{
    if (workers < 1)
        throw std::invalid_argument("a job needs at least one worker");
    if (samples < workers)
        throw std::invalid_argument("the training set has " + std::to_string(samples) + " samples, fewer than the "
            + std::to_string(workers) + " workers");
    const std::int64_t base = samples / workers, extra = samples % workers;
    std::int64_t begin = 0;
    for (int w = 0; w < workers; ++w) {
        const std::int64_t size = base + (w < extra ? 1 : 0);
        active_[w] = { { begin, begin + size } };
        backups_[w] = {};
        begin += size;
    }
}

std::vector<WorkerId> DataShares::members() const
{
    std::vector<WorkerId> out;
    for (const auto& [worker, ranges] : active_)
        out.push_back(worker);
    return out;
}

const std::vector<SampleRange>& DataShares::active(WorkerId worker) const
{
    const auto it = active_.find(worker);
    if (it == active_.end())
        throw std::invalid_argument("worker " + std::to_string(worker) + " holds no data share");
    return it->second;
}

const std::vector<SampleRange>& DataShares::backups(WorkerId worker) const
{
    const auto it = backups_.find(worker);
    if (it == backups_.end())
        throw std::invalid_argument("worker " + std::to_string(worker) + " holds no data share");
    return it->second;
}

ShareChange DataShares::add_worker(WorkerId worker)
{
    if (member(worker))
        throw std::invalid_argument("worker " + std::to_string(worker) + " already holds a data share");
    // A lone worker cuts its data in two: in one chunk it would hand the newcomer all of it
    // and keep nothing to sample from.
    const auto n = std::max<std::int64_t>(2, static_cast<std::int64_t>(active_.size()));
    ShareChange change;
    Ranges received;
    for (auto& [donor, ranges] : active_) {
        const std::int64_t chunk = total(ranges) / n;
        if (chunk == 0)
            continue;
        const Ranges handed = tail(ranges, chunk);
        ranges = difference(ranges, handed);
        backups_[donor] = united(backups_[donor], handed);
        received = united(std::move(received), handed);
        change.moved_samples += chunk;
    }
    if (received.empty())
        throw std::invalid_argument(
            "worker " + std::to_string(worker) + " cannot join: the members' shares are too small to cut");
    active_[worker] = std::move(received);
    backups_[worker] = {};
    return change;
}

ShareChange DataShares::remove_worker(WorkerId worker)
{
    if (!member(worker))
        throw std::invalid_argument("worker " + std::to_string(worker) + " holds no data share");
    if (active_.size() == 1)
        throw std::invalid_argument("worker " + std::to_string(worker) + " is the last worker of the job");
    Ranges orphaned = std::move(active_[worker]);
    active_.erase(worker);
    backups_.erase(worker);

    ShareChange change;
    for (auto& [holder, ranges] : active_) {
        Ranges& backup = backups_[holder];
        const Ranges back = intersection(orphaned, backup);
        if (back.empty())
            continue;
        ranges = united(ranges, back);
        backup = difference(backup, back);
        orphaned = difference(orphaned, back);
        change.reactivated_samples += total(back);
    }
    // Data nobody backs up is moved: an even split over the members.
    const auto n = static_cast<std::int64_t>(active_.size());
    const std::int64_t left = total(orphaned), base = left / n, extra = left % n;
    std::int64_t index = 0;
    for (auto& [holder, ranges] : active_) {
        const std::int64_t size = base + (index++ < extra ? 1 : 0);
        const Ranges piece = head(orphaned, size);
        orphaned = difference(orphaned, piece);
        ranges = united(ranges, piece);
        change.moved_samples += size;
    }
    return change;
}

std::vector<std::int64_t> indices_of(const std::vector<SampleRange>& ranges)
{
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(total(ranges)));
    for (const auto& r : ranges)
        for (std::int64_t i = r.begin; i < r.end; ++i)
            out.push_back(i);
    return out;
}

namespace {

void put_ranges(StateWriter& out, const std::map<WorkerId, std::vector<SampleRange>>& ranges)
{
    out.put(static_cast<std::uint64_t>(ranges.size()));
    for (const auto& [worker, list] : ranges) {
        out.put(worker);
        std::vector<std::int64_t> bounds;
        for (const SampleRange& r : list)
            bounds.insert(bounds.end(), { r.begin, r.end });
        out.put(bounds);
    }
}

std::map<WorkerId, std::vector<SampleRange>> get_ranges(StateReader& in, const char* what)
{
    std::map<WorkerId, std::vector<SampleRange>> ranges;
    for (std::size_t n = in.array_size(what, 1); n > 0; --n) {
        const auto worker = in.get<WorkerId>(what);
        std::vector<std::int64_t> bounds;
        in.get(bounds, what);
        if (bounds.size() % 2 != 0)
            in.fail(what, "is not a list of [begin, end) ranges");
        auto& list = ranges[worker];
        for (std::size_t i = 0; i < bounds.size(); i += 2)
            list.push_back({ bounds[i], bounds[i + 1] });
    }
    return ranges;
}

} // namespace

void DataShares::save_state(StateWriter& out) const
{
    out.put(samples_);
    put_ranges(out, active_);
    put_ranges(out, backups_);
}

void DataShares::load_state(StateReader& in)
{
    if (in.get<std::int64_t>("data share samples") != samples_)
        in.fail("data share samples", "differ from this job's training set");
    active_ = get_ranges(in, "active data shares");
    backups_ = get_ranges(in, "backup data shares");
}

} // namespace fulcrum::data
