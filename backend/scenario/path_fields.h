#pragma once

// The schema of a scenario's path fields: every field the parser reads as a path (through
// JsonFields::server_path), so one walk confines them all and a test can try hostile names
// on each. The parser refuses to read a path field this list lacks.

#include "common/server_path.h"

#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::scenario {

struct PathField {
    // The field's path with array indices written "[]": "changes[].policy.predictor.warm_start_file".
    std::string_view field;
    FolderKind kind;
    // The smallest scenario sections that hold the field, as a JSON object whose members go
    // into a valid scenario's top level; the field's value is the string "@PATH@". For tests
    // and the submission fuzzer.
    std::string_view example;
};

const std::vector<PathField>& path_fields();

// "changes[3].policy" → "changes[].policy": a concrete field's entry in path_fields().
std::string path_field_pattern(std::string_view field);

} // namespace fulcrum::scenario
