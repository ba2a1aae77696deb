#include "common/error.h"
#include "protocol/token_file.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;

namespace {

std::filesystem::path write_file(const std::string& name, const std::string& text)
{
    auto path = std::filesystem::temp_directory_path() / ("fulcrum-tokens-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(path) << text;
    return path;
}

std::string error_of(const std::filesystem::path& path)
{
    try {
        read_token_file(path);
    } catch (const InputError& e) {
        return e.field() + ": " + e.reason();
    }
    return "read";
}

} // namespace

TEST(TokenFile, RolesCommentsAndABareTokenAreReadAndPickedByPreference)
{
    const auto path = write_file("good",
        "# fulcrumd tokens\n\nviewer 0123456789abcdef0123\n"
        "operator aaaaaaaaaaaaaaaaaaaa  # the operator's\nworker bbbbbbbbbbbbbbbbbbbb\n");
    const auto lines = read_token_file(path);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0].role, Role::Viewer);
    EXPECT_EQ(pick_token(lines, { Role::Operator, Role::Viewer }), "aaaaaaaaaaaaaaaaaaaa");
    EXPECT_EQ(pick_token(lines, { Role::Worker }), "bbbbbbbbbbbbbbbbbbbb");
    const auto bare = write_file("bare", "cccccccccccccccccccc\n");
    EXPECT_EQ(pick_token(read_token_file(bare), { Role::Worker }), std::nullopt);
    EXPECT_EQ(pick_token(read_token_file(bare), { Role::Worker }, true), "cccccccccccccccccccc");
    std::filesystem::remove(path);
    std::filesystem::remove(bare);
}

TEST(TokenFile, ANamedLineGivesItsHolder)
{
    const auto path
        = write_file("named", "operator alice.smith@ops aaaaaaaaaaaaaaaaaaaa\noperator bbbbbbbbbbbbbbbbbbbb\n");
    const auto lines = read_token_file(path);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].role, Role::Operator);
    EXPECT_EQ(lines[0].name, "alice.smith@ops");
    EXPECT_EQ(lines[0].token, "aaaaaaaaaaaaaaaaaaaa");
    EXPECT_EQ(lines[1].name, "") << "the two-word form is still read";
    EXPECT_FALSE(valid_token_name(std::string(65, 'a')));
    std::filesystem::remove(path);
}

TEST(TokenFile, ABadLineIsRefusedNamingItsLineAndWhatWasExpected)
{
    const std::pair<std::string, std::string> cases[] = {
        { "root aaaaaaaaaaaaaaaaaaaa\n", "line 1: role must be admin, operator, viewer or worker, got 'root'" },
        { "# x\noperator short\n", "line 2: a token must have at least 16 characters" },
        { "operator alice aaaaaaaaaaaaaaaaaaaa extra\n",
            "line 1: expected 'ROLE NAME TOKEN [tenant=T]' or 'ROLE TOKEN [tenant=T]'" },
        { "operator al/ice aaaaaaaaaaaaaaaaaaaa\n",
            "line 1: a name is 1 to 64 letters, digits and . _ - @ +, got 'al/ice'" },
        { "operator alice short\n", "line 1: a token must have at least 16 characters" },
        // A token in the role's or the name's place is not repeated in the error (which is logged).
        { "0123456789abcdef0123 operator\n",
            "line 1: role must be admin, operator, viewer or worker, got a word of 20 characters (not shown: it may "
            "be a token)" },
        { "operator 0123456789abcdef0123/x alice\n",
            "line 1: a name is 1 to 64 letters, digits and . _ - @ +, got a word of 22 characters (not shown: it "
            "may be a token)" },
        { "# only a comment\n", ": holds no token" },
    };
    for (const auto& [text, expected] : cases) {
        const auto path = write_file("bad", text);
        EXPECT_EQ(error_of(path), expected) << text;
        std::filesystem::remove(path);
    }
    EXPECT_EQ(error_of("/nonexistent/tokens"), ": cannot be read");
}

TEST(TokenFile, ALineMayNameItsTenantAndTheAdminRole)
{
    const auto path = write_file("tenants",
        "admin root aaaaaaaaaaaaaaaaaaaa\n"
        "operator alice bbbbbbbbbbbbbbbbbbbb tenant=research\n"
        "viewer cccccccccccccccccccc tenant=ml-ops.eu\n"
        "worker w dddddddddddddddddddd\n");
    const auto lines = read_token_file(path);
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0].role, Role::Admin);
    EXPECT_EQ(lines[0].tenant, std::nullopt);
    EXPECT_EQ(lines[1].name, "alice");
    EXPECT_EQ(lines[1].token, "bbbbbbbbbbbbbbbbbbbb");
    EXPECT_EQ(lines[1].tenant, "research");
    EXPECT_EQ(lines[2].name, "") << "ROLE TOKEN tenant=T names no holder";
    EXPECT_EQ(lines[2].token, "cccccccccccccccccccc");
    EXPECT_EQ(lines[2].tenant, "ml-ops.eu");
    EXPECT_EQ(lines[3].tenant, std::nullopt);
    EXPECT_EQ(pick_token(lines, { Role::Admin, Role::Operator }), "aaaaaaaaaaaaaaaaaaaa");
    std::filesystem::remove(path);
}

TEST(TokenFile, ABadTenantIsRefusedNamingTheLine)
{
    const auto empty = write_file("tenant-empty", "operator alice bbbbbbbbbbbbbbbbbbbb tenant=\n");
    EXPECT_EQ(error_of(empty), "line 1: a tenant is 1 to 64 letters, digits and . _ - @ +, got ''");
    const auto odd = write_file("tenant-odd", "viewer bob cccccccccccccccccccc tenant=a/b\n");
    EXPECT_EQ(error_of(odd), "line 1: a tenant is 1 to 64 letters, digits and . _ - @ +, got 'a/b'");
    const auto extra = write_file("tenant-extra", "viewer bob cccccccccccccccccccc extra tenant=a\n");
    EXPECT_EQ(error_of(extra), "line 1: expected 'ROLE NAME TOKEN [tenant=T]' or 'ROLE TOKEN [tenant=T]'");
    const auto role = write_file("tenant-role", "root bob cccccccccccccccccccc tenant=a\n");
    EXPECT_EQ(error_of(role), "line 1: role must be admin, operator, viewer or worker, got 'root'");
    EXPECT_TRUE(valid_tenant_name("team_7+x"));
    EXPECT_FALSE(valid_tenant_name(std::string(65, 't')));
    for (const auto& p : { empty, odd, extra, role })
        std::filesystem::remove(p);
}

// A client's --token-file may be a pipe (`--token-file <(pass show fulcrum)`): it is read as
// a stream. fulcrumd's own file, read again at every change, must be a regular file: a FIFO
// in its place is refused at once instead of hanging the thread that reads it.
TEST(TokenFile, AClientReadsAPipeAndFulcrumdRefusesOne)
{
    const auto fifo
        = std::filesystem::temp_directory_path() / ("fulcrum-tokens-" + std::to_string(::getpid()) + "-fifo");
    std::filesystem::remove(fifo);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] { std::ofstream(fifo) << "operator aaaaaaaaaaaaaaaaaaaa\n"; });
    const auto lines = read_token_file(fifo);
    writer.join();
    EXPECT_EQ(pick_token(lines, { Role::Operator }), "aaaaaaaaaaaaaaaaaaaa");
    try {
        read_kept_token_file(fifo);
        ADD_FAILURE() << "a FIFO was read";
    } catch (const InputError& e) {
        EXPECT_EQ(e.reason(), "cannot be read: it is a FIFO, not a regular file");
    }
    std::filesystem::remove(fifo);
    const auto file = write_file("kept", "viewer 0123456789abcdef0123\n");
    EXPECT_EQ(read_kept_token_file(file).size(), 1u);
    std::filesystem::remove(file);
}
