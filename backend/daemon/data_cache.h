#pragma once

// The data sets fulcrumd's jobs read, each read once and shared read-only between the jobs
// that read it at the same time (Fashion-MNIST is 220 MiB as floats: 200 jobs held 200
// copies before). A set no running job holds is freed. Thread-safe: jobs read from their
// own threads; two jobs asking for one set at once wait for a single read.

#include "serve/io_path.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace fulcrum::data {
struct Dataset;
struct TrainTest;
}
namespace fulcrum::scenario {
struct Scenario;
}

namespace fulcrum::daemon {

class DataCache {
public:
    // The scenario's training and test sets (run::load_scenario_data), from the cache when a
    // running job holds them. Throws as loading does.
    data::TrainTest read(const scenario::Scenario& scenario);
    std::size_t sets_held() const; // data sets some job still holds

private:
    struct Slot {
        std::mutex reading; // one read per set at a time (try_lock only, off the job threads)
        std::atomic<std::weak_ptr<const data::Dataset>> train, test;
    };
    // A published snapshot, a slot added by copy: /metrics counts the sets on an I/O thread.
    using Slots = std::map<std::string, std::shared_ptr<Slot>>;
    std::atomic<std::shared_ptr<const Slots>> slots_ { std::make_shared<const Slots>() };
};

} // namespace fulcrum::daemon
