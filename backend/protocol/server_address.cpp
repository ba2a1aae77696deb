#include "protocol/server_address.h"

#include "common/error.h"

#include <charconv>
#include <cstdlib>

namespace fulcrum::protocol {

namespace {

[[noreturn]] void refuse(std::string_view text, std::string_view field, const std::string& why)
{
    throw InputError(std::string(field), {},
        why + " in '" + std::string(text) + "'; expected " + std::string(kServerForms) + ", e.g. "
            + std::string(kDefaultServer));
}

} // namespace

std::string ServerAddress::url() const
{
    const bool v6 = host.find(':') != std::string::npos;
    return std::string(tls ? "wss://" : "ws://") + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

ServerAddress parse_server_address(std::string_view text, std::string_view field)
{
    ServerAddress a;
    // Blanks around it (an environment file's, a pasted one's) are no part of it.
    const auto first = text.find_first_not_of(" \t\r\n");
    text = first == std::string_view::npos ? std::string_view {}
                                           : text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
    std::string_view rest = text;
    if (rest.starts_with("ws://")) {
        rest.remove_prefix(5);
    } else if (rest.starts_with("wss://")) {
        rest.remove_prefix(6);
        a.tls = true;
    } else if (rest.find("://") != std::string_view::npos) {
        refuse(text, field, "a scheme fulcrumd does not speak");
    }
    if (rest.ends_with('/'))
        rest.remove_suffix(1);
    std::string_view port;
    if (rest.starts_with('[')) { // [IPv6]:PORT
        const auto close = rest.find(']');
        if (close == std::string_view::npos || close == 1)
            refuse(text, field, "an IPv6 host without its closing bracket");
        a.host = std::string(rest.substr(1, close - 1));
        rest.remove_prefix(close + 1);
        if (!rest.empty() && !rest.starts_with(':'))
            refuse(text, field, "something after the IPv6 host that is no port");
        port = rest.empty() ? std::string_view {} : rest.substr(1);
    } else {
        const auto colon = rest.rfind(':');
        if (colon != std::string_view::npos && rest.find(':') != colon)
            refuse(text, field, "an IPv6 host without brackets");
        a.host = std::string(rest.substr(0, colon));
        if (colon != std::string_view::npos)
            port = rest.substr(colon + 1);
        else
            port = {};
    }
    if (a.host.empty())
        refuse(text, field, "no host");
    if (a.host.find_first_of("/?#@[] \t") != std::string::npos)
        refuse(text, field, "a path, query, user or stray bracket in the host");
    if (!port.empty() || (rest.ends_with(':'))) {
        unsigned value = 0;
        const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (port.empty() || error != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
            refuse(text, field, "a port that is not from 1 to 65535");
        a.port = static_cast<std::uint16_t>(value);
    }
    return a;
}

ServerAddress server_address(const std::optional<std::string>& given)
{
    if (given)
        return parse_server_address(*given, "--server");
    if (const char* env = std::getenv("FULCRUM_SERVER"); env && *env)
        return parse_server_address(env, "FULCRUM_SERVER");
    return parse_server_address(kDefaultServer);
}

} // namespace fulcrum::protocol
