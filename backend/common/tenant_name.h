#pragma once

#include <algorithm>
#include <string_view>

namespace fulcrum {

// Whether `name` can name a tenant (a token file's tenant=T, a cluster file's "tenants"
// section) or a token's holder: 1 to 64 of letters, digits and . _ - @ +, so that it can
// stand in a log line, a Prometheus label and a journal entry without quoting.
inline bool valid_tenant_name(std::string_view name)
{
    const auto allowed = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
            || c == '-' || c == '@' || c == '+';
    };
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), allowed);
}

} // namespace fulcrum
