#include "common/error.h"

namespace fulcrum {

namespace {
std::string compose(const std::string& source, const std::string& field, const std::string& reason)
{
    std::string text;
    for (const std::string* part : { &source, &field, &reason }) {
        if (part->empty())
            continue;
        if (!text.empty())
            text.append(": ");
        text.append(*part);
    }
    return text;
}
} // namespace

InputError::InputError(std::string source, std::string field, std::string reason)
    : std::runtime_error(compose(source, field, reason))
    , source_(std::move(source))
    , field_(std::move(field))
    , reason_(std::move(reason))
{
}

} // namespace fulcrum
