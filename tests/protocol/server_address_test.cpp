// Issue 45 item 3: one way to name a server. Every program (fulcrumctl, fulcrum-worker, the
// console; the Python client's server_url mirrors it) reads --server through this parser.

#include "common/error.h"
#include "protocol/server_address.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace fulcrum;
using namespace fulcrum::protocol;

namespace {

std::string refusal(const std::string& text)
{
    try {
        parse_server_address(text);
    } catch (const InputError& e) {
        return e.what();
    }
    return "taken";
}

} // namespace

TEST(ServerAddress, EveryFormNamesTheSameServerAndABadOneIsRefusedWithTheForms)
{
    const ServerAddress plain { "head-node", 7481, false };
    EXPECT_EQ(parse_server_address("ws://head-node:7481"), plain);
    EXPECT_EQ(parse_server_address("head-node:7481"), plain);
    EXPECT_EQ(parse_server_address("ws://head-node:7481/"), plain);
    EXPECT_EQ(parse_server_address("head-node"), (ServerAddress { "head-node", kDefaultPort, false }));
    EXPECT_EQ(parse_server_address("wss://head-node:7481"), (ServerAddress { "head-node", 7481, true }));
    EXPECT_EQ(parse_server_address("[::1]:7480"), (ServerAddress { "::1", 7480, false }));
    EXPECT_EQ(parse_server_address("wss://[fe80::1]"), (ServerAddress { "fe80::1", kDefaultPort, true }));
    EXPECT_EQ(parse_server_address("wss://[fe80::1]").url(), "wss://[fe80::1]:7480");
    EXPECT_EQ(parse_server_address("10.0.0.5:9000").url(), "ws://10.0.0.5:9000");
    EXPECT_EQ(parse_server_address(" head-node:7481\n"), plain) << "an environment file's blanks";

    EXPECT_EQ(refusal("http://head:80"),
        "--server: a scheme fulcrumd does not speak in 'http://head:80'; expected ws://HOST:PORT, "
        "wss://HOST:PORT (TLS) or HOST:PORT, e.g. ws://127.0.0.1:7480");
    for (const char* bad : { "", "ws://", ":7480", "head:0", "head:65536", "head:", "head:x", "::1:7480", "[::1",
             "[::1]x", "ws://user@head:1", "ws://head:1/path", "head :1", "a]b:1", "[a[b]:1" })
        EXPECT_NE(refusal(bad).find("expected ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT"), std::string::npos)
            << "'" << bad << "': " << refusal(bad);
}

TEST(ServerAddress, TheServerIsTheOptionElseFulcrumServerElseTheDefault)
{
    ::unsetenv("FULCRUM_SERVER");
    EXPECT_EQ(server_address(std::nullopt).url(), "ws://127.0.0.1:7480");
    ::setenv("FULCRUM_SERVER", "10.1.2.3:7555", 1);
    EXPECT_EQ(server_address(std::nullopt).url(), "ws://10.1.2.3:7555");
    EXPECT_EQ(server_address(std::string("wss://head:7481")).url(), "wss://head:7481") << "the option first";
    ::setenv("FULCRUM_SERVER", "gopher://x", 1);
    try {
        server_address(std::nullopt);
        ADD_FAILURE() << "a bad FULCRUM_SERVER was taken";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("FULCRUM_SERVER: ", 0), 0u) << e.what();
    }
    ::unsetenv("FULCRUM_SERVER");
}
