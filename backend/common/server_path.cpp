#include "common/server_path.h"

#include "common/named_values.h"

#include <cstdio>

namespace fulcrum {

namespace {

constexpr NameTable<FolderKind, 3> kFolderNames { { { FolderKind::Datasets, "datasets" },
    { FolderKind::Models, "models" }, { FolderKind::Runs, "runs" } } };

class AsGiven final : public PathPolicy {
public:
    std::optional<std::string> resolve(
        FolderKind, const std::string& name, const std::string&, std::string&) const override
    {
        return name;
    }
};

} // namespace

std::string_view to_string(FolderKind kind)
{
    return name_of(kFolderNames, kind);
}

const PathPolicy& paths_as_given()
{
    static const AsGiven policy;
    return policy;
}

std::string unusable_name(std::string_view name)
{
    if (name.empty())
        return "is empty; expected a name";
    for (std::size_t i = 0; i < name.size(); ++i) {
        const auto byte = static_cast<unsigned char>(name[i]);
        if (byte < 0x20 || byte == 0x7f) {
            char code[8];
            std::snprintf(code, sizeof code, "0x%02x", byte);
            return "holds a control character (byte " + std::string(code) + " at offset " + std::to_string(i)
                + "); a name is printable text";
        }
    }
    return {};
}

} // namespace fulcrum
