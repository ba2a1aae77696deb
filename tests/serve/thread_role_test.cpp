// fulcrumd's threads say what they are for (a name top -H and perf show) and the background
// ones run below the process's priority (serve/thread_role.h).

#include "serve/core_thread.h"
#include "serve/task_threads.h"
#include "serve/thread_role.h"

#include <algorithm>
#include <future>
#include <gtest/gtest.h>
#include <pthread.h>
#include <set>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum::serve;

namespace {

struct Seen {
    std::string name;
    int nice = 0;
};

Seen this_thread()
{
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    return { name, getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) };
}

int process_nice()
{
    return getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
}

// A role taken on a thread of its own, as fulcrumd's threads take theirs.
Seen taken_on_a_new_thread(ThreadRole role, int niceness, bool* granted = nullptr)
{
    Seen seen;
    std::thread([&] {
        const bool ok = take_role(role, niceness);
        if (granted)
            *granted = ok;
        seen = this_thread();
    }).join();
    return seen;
}

} // namespace

TEST(ThreadRole, EachRoleHasItsOwnNameThatFitsTheKernelsFifteenCharacters)
{
    const ThreadRole roles[] = { ThreadRole::io, ThreadRole::core, ThreadRole::scheduler, ThreadRole::replay,
        ThreadRole::job, ThreadRole::disk };
    std::set<std::string> names;
    for (const ThreadRole role : roles) {
        const std::string name = role_name(role);
        EXPECT_LE(name.size(), 15U) << name;
        EXPECT_TRUE(name.starts_with("fulcrum-")) << name;
        names.insert(name);
        EXPECT_EQ(taken_on_a_new_thread(role, 0).name, name);
    }
    EXPECT_EQ(names.size(), std::size(roles));
}

TEST(ThreadRole, ANicenessIsAddedToTheProcesssOwnAndStopsAtNineteen)
{
    const int process = process_nice();
    if (process >= 19)
        GTEST_SKIP() << "this test runs at nice " << process << ": no priority below it";
    bool granted = false;
    const Seen job = taken_on_a_new_thread(ThreadRole::job, 5, &granted);
    EXPECT_TRUE(granted);
    EXPECT_EQ(job.nice, std::min(19, process + 5));
    EXPECT_EQ(taken_on_a_new_thread(ThreadRole::job, 40).nice, 19);
    // 0 leaves a thread at the priority it started with, and no role moves the process's.
    EXPECT_EQ(taken_on_a_new_thread(ThreadRole::io, 0).nice, process);
    EXPECT_EQ(process_nice(), process);
}

TEST(ThreadRole, TheDiskThreadsTakeTheirNicenessAndACoreThreadItsRoleAtTheProcesssPriority)
{
    const int process = process_nice();
    if (process >= 19)
        GTEST_SKIP() << "this test runs at nice " << process << ": no priority below it";
    TaskThreads disk(2, 5);
    std::promise<Seen> on_disk;
    disk.post([&] { on_disk.set_value(this_thread()); });
    const Seen disk_seen = on_disk.get_future().get();
    EXPECT_EQ(disk_seen.name, "fulcrum-disk");
    EXPECT_EQ(disk_seen.nice, std::min(19, process + 5));

    CoreThread core;
    const Seen core_seen = core.call([] { return this_thread(); });
    EXPECT_EQ(core_seen.name, "fulcrum-core");
    EXPECT_EQ(core_seen.nice, process);
    CoreThread replays("the replays' thread", ThreadRole::replay);
    EXPECT_EQ(replays.call([] { return this_thread(); }).name, "fulcrum-replay");
}
