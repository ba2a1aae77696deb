#pragma once

// Internal to db/: creating, recognising and migrating a run store.

#include "db/sqlite_handle.h"

namespace fulcrum::db::detail {

// "FULC": marks a SQLite file as a Fulcrum run store (PRAGMA application_id).
inline constexpr std::int64_t kApplicationId = 0x46554c43;

// Creates the schema in an empty database or migrates an older one to kSchemaVersion.
// Throws InputError for a foreign database or one written by a newer Fulcrum.
void prepare_for_writing(Connection& connection);

// Checks that a database is a run store this build can read and returns its schema version
// (a reader leaves an older store as it is); throws InputError otherwise.
int check_readable(Connection& connection);

// The first schema version with the iterations' GPU columns.
inline constexpr int kGpuColumnsVersion = 4;
// The first schema version with cluster_states.
inline constexpr int kClusterStatesVersion = 5;
// From this version on a run names the tenant its job belongs to (issue 47).
inline constexpr int kTenantVersion = 6;

} // namespace fulcrum::db::detail
