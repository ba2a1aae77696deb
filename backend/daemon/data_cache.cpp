#include "daemon/data_cache.h"

#include "data/dataset.h"
#include "run/run_scenario.h"
#include "scenario/job_footprint.h"

namespace fulcrum::daemon {

using serve::copy_on_write;

data::TrainTest DataCache::read(const scenario::Scenario& scenario)
{
    // The admission's key: the jobs the resource book counts as sharing a set share it here.
    const std::string key = scenario::estimate_footprint(scenario, 1).data_key;
    const auto found = [&](const Slots& slots) {
        const auto it = slots.find(key);
        return it == slots.end() ? nullptr : it->second;
    };
    std::shared_ptr<Slot> slot = found(*slots_.load());
    if (!slot)
        slot = copy_on_write(slots_, [&](Slots& slots) {
            auto& entry = slots[key];
            if (!entry)
                entry = std::make_shared<Slot>();
            return entry;
        });
    std::lock_guard reading(slot->reading);
    data::TrainTest data { slot->train.load().lock(), slot->test.load().lock() };
    if (data.train && data.test)
        return data;
    data = run::load_scenario_data(scenario, scenario.seed);
    slot->train.store(data.train);
    slot->test.store(data.test);
    return data;
}

std::size_t DataCache::sets_held() const
{
    std::size_t held = 0;
    for (const auto& [key, slot] : *slots_.load()) {
        std::unique_lock reading(slot->reading, std::try_to_lock); // never waits
        held += !reading.owns_lock() || !slot->train.load().expired() ? 1 : 0; // one being read is held
    }
    return held;
}

} // namespace fulcrum::daemon
