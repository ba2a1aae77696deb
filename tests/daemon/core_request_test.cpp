// What a session asks of the cluster core, as values (daemon/core_request.h): which client
// messages go to the core, the request id each answer names, and the command each is in
// fulcrumd's log.
#include "daemon/core_request.h"

#include <gtest/gtest.h>

using namespace fulcrum;
using namespace fulcrum::daemon;
using namespace fulcrum::protocol;

namespace {

// Every message kind of a CoreAsk but the departure is a client message: nothing reaches
// the core that a client could not send.
template <class... Asks> constexpr bool client_messages(std::variant<Asks...>*)
{
    constexpr bool each[] = { (std::is_same_v<Asks, ConnectionClosed> || kGoesToCore<Asks, ClientMessage>)... };
    for (const bool one : each)
        if (!one)
            return false;
    return true;
}

} // namespace

TEST(CoreRequest, TheCommandsJoinsAndADepartureGoToTheCoreAndNothingElse)
{
    static_assert(client_messages(static_cast<CoreAsk*>(nullptr)));
    EXPECT_TRUE(kGoesToCore<JobCommand>);
    EXPECT_TRUE(kGoesToCore<ChangeJob>);
    EXPECT_TRUE(kGoesToCore<ResizeJob>);
    EXPECT_TRUE(kGoesToCore<SetClusterPolicy>);
    EXPECT_TRUE(kGoesToCore<WorkerCommand>);
    EXPECT_TRUE(kGoesToCore<JoinJob>);
    EXPECT_TRUE(kGoesToCore<JoinPool>);
    EXPECT_TRUE(kGoesToCore<ConnectionClosed>);
    // Reads, submissions (disk work first), replays and reports are answered off the core.
    EXPECT_FALSE(kGoesToCore<Hello>);
    EXPECT_FALSE(kGoesToCore<Heartbeat>);
    EXPECT_FALSE(kGoesToCore<ListJobs>);
    EXPECT_FALSE(kGoesToCore<ListCapabilities>);
    EXPECT_FALSE(kGoesToCore<Subscribe>);
    EXPECT_FALSE(kGoesToCore<Unsubscribe>);
    EXPECT_FALSE(kGoesToCore<SubmitJob>);
    EXPECT_FALSE(kGoesToCore<SubmitWorkload>);
    EXPECT_FALSE(kGoesToCore<ListRuns>);
    EXPECT_FALSE(kGoesToCore<OpenReplay>);
    EXPECT_FALSE(kGoesToCore<ReplayCommand>);
    EXPECT_FALSE(kGoesToCore<ReportIteration>);
}

TEST(CoreRequest, EachCommandIsNamedAsItsLogLineSaysAndItsAnswerNamesItsRequest)
{
    struct Case {
        CoreAsk ask;
        std::string id, what;
        std::optional<JobId> job;
    };
    WorkerCommand inject;
    inject.id = "w1";
    inject.action = WorkerAction::InjectStraggler;
    inject.job = 3;
    inject.worker = 7;
    const std::vector<Case> cases {
        { JobCommand { "c1", JobAction::Cancel, 2 }, "c1", "cancel-job", 2 },
        { JobCommand { "c2", JobAction::Freeze, 5 }, "c2", "freeze-job", 5 },
        { ChangeJob { "s1", JobSetting::SyncModel, 6, "{}" }, "s1", "change-job set-sync-model", 6 },
        { ResizeJob { "r1", 4, ResizeAction::AddWorker, 2 }, "r1", "resize-job add-worker", 4 },
        { SetClusterPolicy { "p1", "lwf-2", std::nullopt, std::nullopt }, "p1", "set-cluster-policy", std::nullopt },
        { inject, "w1", "inject-straggler worker 7", 3 },
    };
    for (const Case& c : cases) {
        const std::optional<CommandName> named = command_name(c.ask);
        ASSERT_TRUE(named.has_value()) << c.what;
        EXPECT_EQ(named->what, c.what);
        EXPECT_EQ(named->job, c.job) << c.what;
        EXPECT_EQ(request_id(c.ask), c.id) << c.what;
    }
}

TEST(CoreRequest, JoinsAndADepartureAreNoCommands)
{
    EXPECT_FALSE(command_name(JoinJob { "j1", 3, 1, "node-a" }).has_value());
    EXPECT_EQ(request_id(JoinJob { "j1", 3, 1, "node-a" }), "j1");
    EXPECT_FALSE(command_name(JoinPool { "j2", "node-b" }).has_value());
    EXPECT_EQ(request_id(JoinPool { "j2", "node-b" }), "j2");
    EXPECT_FALSE(command_name(ConnectionClosed {}).has_value());
    EXPECT_EQ(request_id(ConnectionClosed {}), "");
}
