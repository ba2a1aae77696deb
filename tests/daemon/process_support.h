#pragma once

// Starting the real programs (fulcrumd, fulcrum-worker, fulcrum-run) from tests that kill
// them at chosen moments.

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <spawn.h>
#include <string>
#include <vector>

extern char** environ;

namespace fulcrum::testing_support {

// `args[0]` is the program; its standard output is dropped and its standard error appended
// to `log`.
inline pid_t spawn_logged(std::vector<std::string> args, const std::filesystem::path& log)
{
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t out;
    posix_spawn_file_actions_init(&out);
    posix_spawn_file_actions_addopen(&out, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&out, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid = 0;
    EXPECT_EQ(::posix_spawn(&pid, args[0].c_str(), &out, nullptr, argv.data(), environ), 0) << args[0];
    posix_spawn_file_actions_destroy(&out);
    return pid;
}

} // namespace fulcrum::testing_support
