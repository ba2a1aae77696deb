#include "daemon/data_cache.h"

#include "data/dataset.h"
#include "run/run_scenario.h"
#include "scenario/job_footprint.h"

namespace fulcrum::daemon {

data::TrainTest DataCache::read(const scenario::Scenario& scenario)
{
    // The admission's key: the jobs the resource book counts as sharing a set share it here.
    const std::string key = scenario::estimate_footprint(scenario, 1).data_key;
    std::shared_ptr<Slot> slot;
    {
        std::lock_guard lock(mutex_);
        auto& entry = slots_[key];
        if (!entry)
            entry = std::make_shared<Slot>();
        slot = entry;
    }
    std::lock_guard reading(slot->reading);
    data::TrainTest data { slot->train.lock(), slot->test.lock() };
    if (data.train && data.test)
        return data;
    data = run::load_scenario_data(scenario, scenario.seed);
    slot->train = data.train;
    slot->test = data.test;
    return data;
}

std::size_t DataCache::sets_held() const
{
    std::lock_guard lock(mutex_);
    std::size_t held = 0;
    for (const auto& [key, slot] : slots_) {
        std::unique_lock reading(slot->reading, std::try_to_lock);
        held += !reading.owns_lock() || !slot->train.expired() ? 1 : 0; // one being read is held
    }
    return held;
}

} // namespace fulcrum::daemon
