#include "scenario/path_fields.h"

#include <cctype>

namespace fulcrum::scenario {

const std::vector<PathField>& path_fields()
{
    static const std::vector<PathField> fields {
        { "data.path", FolderKind::Datasets, R"({"data": {"source": "fashion-mnist", "path": "@PATH@"}})" },
        { "policy.predictor.warm_start_file", FolderKind::Models,
            R"({"policy": {"type": "lbbsp-cpu",
                "predictor": {"type": "narx", "warm_start": "file", "warm_start_file": "@PATH@"}}})" },
        { "changes[].policy.predictor.warm_start_file", FolderKind::Models,
            R"({"changes": [{"before_iteration": 5, "policy": {"type": "lbbsp-cpu",
                "predictor": {"type": "narx", "warm_start": "file", "warm_start_file": "@PATH@"}}}]})" },
    };
    return fields;
}

std::string path_field_pattern(std::string_view field)
{
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        out += field[i];
        if (field[i] != '[')
            continue;
        std::size_t j = i + 1;
        while (j < field.size() && std::isdigit(static_cast<unsigned char>(field[j])))
            ++j;
        i = j - 1; // the digits are left out; the ']' comes next
    }
    return out;
}

} // namespace fulcrum::scenario
