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

std::string printable(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\r')
            out += "\\r";
        else if (byte < 0x20 || byte == 0x7f) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[byte >> 4];
            out += kHex[byte & 0xfu];
        } else
            out += c;
    }
    return out;
}

} // namespace fulcrum
