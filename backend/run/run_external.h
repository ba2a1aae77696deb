#pragma once

#include "run/run_scenario.h"

namespace fulcrum::run {

// An external framework job (a scenario with an "external" section): records its ranks'
// reports as the job's rows through `options.ranks`, which only fulcrumd provides. The
// summary's accuracy is the last evaluation a rank reported. Throws InputError without
// ranks, train::RankLost when a rank is lost (the run is recorded as "lost").
RunSummary run_external_job(const scenario::Scenario& scenario, const RunOptions& options);

} // namespace fulcrum::run
