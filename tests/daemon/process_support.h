#pragma once

// Starting the real programs (fulcrumd, fulcrum-worker, fulcrum-run) from tests that kill
// them at chosen moments.

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
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

// The port fulcrumd announced in its log ("serving ws://127.0.0.1:PORT"), waited for up to
// 10 s; 0 (and a test failure) when it never did.
inline unsigned short announced_port(const std::filesystem::path& log)
{
    static const std::regex serving("serving wss?://127\\.0\\.0\\.1:([0-9]+)");
    for (int i = 0; i < 1000; ++i) {
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        std::smatch m;
        const std::string s = text.str();
        if (std::regex_search(s, m, serving))
            return static_cast<unsigned short>(std::stoi(m[1]));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "fulcrumd did not announce its port in " << log;
    return 0;
}

// Kills (SIGKILL) and reaps a spawned program when the test leaves its scope, a failed
// assertion included, unless `release()` said it ended already.
class Reaper {
public:
    explicit Reaper(pid_t pid)
        : pid_(pid)
    {
    }
    Reaper(const Reaper&) = delete;
    Reaper& operator=(const Reaper&) = delete;
    ~Reaper()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    void release() { pid_ = 0; }

private:
    pid_t pid_;
};

} // namespace fulcrum::testing_support
