// Typed job events (common/job_event.h): every kind goes typed -> stored -> typed unchanged,
// stores written by earlier releases read through the one table, and the fold reads only the
// typed form.
#include "common/job_event.h"
#include "common/job_fold.h"

#include <gtest/gtest.h>
#include <set>

using namespace fulcrum;

namespace {

// A message as the recording code writes it for each kind.
std::string message_of(EventKind kind)
{
    switch (kind) {
    case EventKind::PolicyChange:
        return "uniform -> lbbsp-cpu";
    case EventKind::SyncModelChange:
        return "bsp -> ssp(s=5)";
    case EventKind::Exclude:
        return "worker 2 excluded for 30 s";
    case EventKind::StragglerInjected:
        return "worker 1's batches take 4.000000x longer";
    case EventKind::WorkerStalled:
        return "worker 2 stalled: its batch of 64 has taken 2.5 s, predicted 0.04 s (its limit 2.5 s: ...)";
    case EventKind::WorkerRecovered:
        return "worker 2 recovered: its batch of 64 took 14.1 s, predicted 0.04 s";
    default:
        return std::string(to_string(kind)) + " happened";
    }
}

std::vector<EventKind> every_kind()
{
    std::vector<EventKind> kinds;
    for (int k = 0; k < static_cast<int>(EventKind::Other); ++k)
        kinds.push_back(static_cast<EventKind>(k));
    return kinds;
}

} // namespace

TEST(JobEvents, EveryKindGoesTypedThenStoredThenTypedUnchanged)
{
    const std::vector<EventKind> kinds = every_kind();
    ASSERT_EQ(kinds.size(), 49u);
    std::set<std::string> names;
    for (EventKind kind : kinds) {
        const std::string name(to_string(kind));
        EXPECT_NE(name, "unknown") << static_cast<int>(kind);
        EXPECT_TRUE(names.insert(name).second) << name << " names two kinds";
        EXPECT_EQ(parse_event_kind(name), kind) << name;

        EventActor person;
        person.kind = EventActor::Kind::Person;
        person.role = "operator";
        person.name = "alice";
        person.program = "fulcrum";
        person.at = "2026-11-26T12:00:00Z";
        JobEvent e = job_event(kind, 41, 12.5, message_of(kind), person, 2);
        e.job = 3;
        const EventRecord stored = record(e);
        EXPECT_EQ(stored.kind, name);
        EXPECT_EQ(stored.actor, "operator:alice (fulcrum) at 2026-11-26T12:00:00Z");
        EXPECT_EQ(typed(stored), e) << name;
        EXPECT_EQ(record(typed(stored)), stored) << name;
    }
}

TEST(JobEvents, TheDetailsAFoldNeedsAreTypedFromTheRecordedText)
{
    EXPECT_EQ(std::get<NameChange>(job_event(EventKind::PolicyChange, 0, 0, "uniform -> lbbsp-cpu").detail),
        (NameChange { "uniform", "lbbsp-cpu" }));
    EXPECT_EQ(std::get<NameChange>(job_event(EventKind::SyncModelChange, 0, 0, "bsp -> ssp(s=5)").detail),
        (NameChange { "bsp", "ssp(s=5)" }));
    EXPECT_EQ(std::get<ExclusionLimit>(job_event(EventKind::Exclude, 0, 0, "worker 2 excluded for 0.5 s").detail),
        (ExclusionLimit { 0.5 }));
    EXPECT_EQ(
        std::get<ExclusionLimit>(job_event(EventKind::Exclude, 0, 0, "worker 2 excluded").detail), (ExclusionLimit {}));
    EXPECT_EQ(std::get<Slowdown>(job_event(EventKind::StragglerInjected, 0, 0, "batches take 2.5x longer").detail),
        (Slowdown { 2.5 }));
    EXPECT_EQ(std::get<Slowdown>(job_event(EventKind::StragglerInjected, 0, 0, "slower").detail), (Slowdown { 1 }));
    EXPECT_EQ(std::get<Sharing>(job_event(EventKind::GpuShared, 0, 0,
                  "worker 0's GPU is time-shared by 3 live jobs: its batches take 3x longer")
                                    .detail),
        (Sharing { 3 }));
    EXPECT_EQ(std::get<Sharing>(job_event(EventKind::LinkContended, 0, 0,
                  "worker 1's pushes and pulls cross its server's link with 1 other live job's "
                  "(eq. 5): they take 2.5x as long")
                                    .detail),
        (Sharing { 2 }));
    EXPECT_EQ(std::get<Sharing>(job_event(EventKind::LinkFree, 0, 0, "alone again").detail), (Sharing { 1 }));
    EXPECT_EQ(std::get<Sharing>(job_event(EventKind::GpuExclusive, 0, 0, "alone again").detail), (Sharing { 1 }));
    EXPECT_EQ(std::get<Stall>(job_event(EventKind::WorkerStalled, 0, 0,
                  "worker 2 stalled: its batch of 64 has taken 2.5 s, predicted 0.04 s (its limit 2.5 s: on_stall's "
                  "factor x the prediction, at least its min_s)")
                                  .detail),
        (Stall { 2.5, 0.04 }));
    EXPECT_EQ(std::get<Stall>(job_event(
                  EventKind::WorkerRecovered, 0, 0, "worker 2 recovered: its batch of 64 took 14.1 s, predicted 0.04 s")
                                  .detail),
        (Stall { 14.1, 0.04 }));
    EXPECT_TRUE(std::holds_alternative<std::monostate>(job_event(EventKind::Pin, 0, 0, "a -> b").detail));
}

// Every actor line fulcrum has written since the first store reads back to its kind, and a
// line this build does not know stays as it was written.
TEST(JobEvents, ActorLinesOfEveryReleaseReadBackExactly)
{
    struct Case {
        const char* line;
        EventActor::Kind kind;
        const char* name;
        const char* program;
        const char* reason;
    };
    const Case cases[] = {
        { "system", EventActor::Kind::System, "", "", "" },
        { "system: worker lost", EventActor::Kind::System, "", "", "worker lost" },
        { "system:shutdown", EventActor::Kind::Person, "shutdown", "", "" }, // EventActor::shutdown()
        { "scenario", EventActor::Kind::Scenario, "", "", "" },
        { "elastic", EventActor::Kind::Elastic, "", "", "" },
        { "policy: on_stall", EventActor::Kind::Policy, "", "", "on_stall" },
        { "scheduler", EventActor::Kind::Scheduler, "", "", "" },
        { "scheduler at 2026-11-20T08:00:00Z", EventActor::Kind::Scheduler, "", "", "" },
        { "scheduler (kill-restart)", EventActor::Kind::Scheduler, "", "", "kill-restart" },
        { "operator:op at 2026-11-20T08:00:00Z", EventActor::Kind::Person, "op", "", "" },
        { "operator:alice (fulcrum@10.0.0.7:5000) at 2026-11-23T17:00:00Z", EventActor::Kind::Person, "alice",
            "fulcrum@10.0.0.7:5000", "" },
        { "operator:test", EventActor::Kind::Person, "test", "", "" },
        { "admin:bob at home (fulcrumctl) at T", EventActor::Kind::Person, "bob at home", "fulcrumctl", "" },
        { "operator@vision:alice (fulcrum) at T", EventActor::Kind::Person, "alice", "fulcrum", "" },
        { "admin@ops@example.org:root at T", EventActor::Kind::Person, "root", "", "" },
        { "a line from the future", EventActor::Kind::Other, "", "", "" },
        { "", EventActor::Kind::Other, "", "", "" },
        { ":nobody", EventActor::Kind::Other, "", "", "" },
        { "@vision:x", EventActor::Kind::Other, "", "", "" },
        { "operator@:x", EventActor::Kind::Other, "", "", "" },
    };
    for (const Case& c : cases) {
        const EventActor a = EventActor::parse(c.line);
        EXPECT_EQ(a.kind, c.kind) << c.line;
        EXPECT_EQ(a.name, c.name) << c.line;
        EXPECT_EQ(a.program, c.program) << c.line;
        EXPECT_EQ(a.reason, c.reason) << c.line;
        EXPECT_EQ(a.line(), c.line);
    }
    EXPECT_TRUE(EventActor::parse("scenario").is_scheduled());
    EXPECT_TRUE(EventActor::parse("elastic").is_scheduled());
    EXPECT_FALSE(EventActor::parse("scheduler (eps)").is_scheduled());
}

// The actors the command path makes are the lines of the list above: a command's actor travels
// typed to the trainer and is written once, as it always was.
TEST(JobEvents, TheActorsCommandsCarryWriteTheLinesOfEveryRelease)
{
    EXPECT_EQ(EventActor::person("operator", "alice", "fulcrum@10.0.0.7:5000", "2026-11-23T17:00:00Z").line(),
        "operator:alice (fulcrum@10.0.0.7:5000) at 2026-11-23T17:00:00Z");
    EXPECT_EQ(EventActor::person("viewer", "fulcrumctl").line(), "viewer:fulcrumctl");
    // A token of a named tenant: its actor says whose (issue 47); the default tenant's, as before.
    const EventActor alice = EventActor::person("operator", "alice", "fulcrum", "T", "vision");
    EXPECT_EQ(alice.line(), "operator@vision:alice (fulcrum) at T");
    EXPECT_EQ(EventActor::parse(alice.line()), alice);
    EXPECT_EQ(EventActor::parse("admin@ops@example.org:root at T").tenant, "ops@example.org");
    EXPECT_EQ(EventActor::parse("admin@ops@example.org:root at T").role, "admin");
    EXPECT_EQ(EventActor::scheduler("eps").line(), "scheduler (eps)");
    EXPECT_EQ(EventActor::scheduler({}, "T").line(), "scheduler at T");
    EXPECT_EQ(EventActor::system().line(), "system");
    EXPECT_EQ(EventActor::system("worker lost").line(), "system: worker lost");
    EXPECT_EQ(EventActor::scenario().line(), "scenario");
    EXPECT_EQ(EventActor::elastic().line(), "elastic");
    EXPECT_EQ(EventActor::policy("on_stall").line(), "policy: on_stall");
    for (const EventActor& a : { EventActor::person("admin", "bob at home", "fulcrumctl", "T"), EventActor::shutdown(),
             EventActor::scheduler("kill-restart", "T"), EventActor::system("worker rejoined") })
        EXPECT_EQ(EventActor::parse(a.line()), a) << a.line();
    EXPECT_EQ(EventActor::shutdown().line(), "system:shutdown");
    EXPECT_TRUE(EventActor::shutdown().is_shutdown());
    EXPECT_TRUE(EventActor::parse("system:shutdown").is_shutdown());
    EXPECT_FALSE(EventActor::system().is_shutdown());
    EXPECT_FALSE(EventActor::system("shutdown").is_shutdown());
}

TEST(JobEvents, AKindThisBuildDoesNotKnowIsKeptAndFoldsToNothing)
{
    const EventRecord future { 1, 7, 3.0, "quantum-leap", 0, "worker 0 is elsewhere", "system" };
    const JobEvent e = typed(future);
    EXPECT_EQ(e.kind, EventKind::Other);
    EXPECT_EQ(e.other_kind, "quantum-leap");
    EXPECT_EQ(record(e), future);
    JobFold fold(2, "uniform", "bsp");
    const JobFold before = fold;
    fold.apply(e);
    EXPECT_EQ(fold, before);
}

TEST(JobFold, FoldsPausesNamesHoldsAndMembers)
{
    JobFold fold(3, "uniform", "bsp", { true, true, false });
    const auto apply = [&](EventKind kind, const std::string& message, std::optional<WorkerId> worker = std::nullopt,
                           std::int64_t iteration = 0,
                           double time_s = 0) { fold.apply(job_event(kind, iteration, time_s, message, {}, worker)); };
    apply(EventKind::JobPaused, "held");
    EXPECT_TRUE(fold.paused());
    apply(EventKind::JobResumed, "after 3 s");
    EXPECT_FALSE(fold.paused());
    apply(EventKind::PolicyChange, "uniform -> lbbsp-cpu/ema");
    apply(EventKind::SyncModelChange, "bsp -> backup(k=1)");
    EXPECT_EQ(fold.policy(), "lbbsp-cpu/ema");
    EXPECT_EQ(fold.sync_model(), "backup(k=1)");
    apply(EventKind::AddWorker, "worker 2 joins", 2, 17);
    EXPECT_EQ(fold.members(), (std::vector<bool> { true, true, true }));
    EXPECT_EQ(fold.member_since(2), 17);
    apply(EventKind::RemoveWorker, "worker 0 leaves", 0, 20);
    EXPECT_EQ(fold.members(), (std::vector<bool> { false, true, true }));
    apply(EventKind::Pin, "worker 1 pinned at batch 8", 1);
    apply(EventKind::Exclude, "worker 1 excluded for 30 s", 1, 21, 100);
    EXPECT_FALSE(fold.holds()[1].pinned) << "an exclusion drops the pin";
    EXPECT_EQ(fold.holds()[1].excluded_until, 130);
    apply(EventKind::Readmit, "worker 1 readmitted", 1);
    EXPECT_FALSE(fold.holds()[1].excluded);
    apply(EventKind::StragglerInjected, "worker 2's batches take 3.000000x longer", 2);
    EXPECT_EQ(fold.holds()[2].slowdown, 3);
    apply(EventKind::Pin, "a worker the job lacks", 9);
    apply(EventKind::AddWorker, "a slot the job lacks", 9);
    EXPECT_EQ(fold.members().size(), 3u);
}

// A kill-restart or a resumed job starts its fold again from the trainer's members: each slot
// keeps the iteration it joined at (the elastic scheduler judges a growth step from it).
TEST(JobFold, ARestartKeepsWhenEachWorkerJoined)
{
    JobFold fold(3, "uniform", "bsp", { true, false, false });
    fold.apply(job_event(EventKind::AddWorker, 100, 10, "worker 1 joins", {}, 1));
    fold.apply(job_event(EventKind::JobPaused, 101, 11, "held"));
    fold.restart("lbbsp-cpu/ema", "bsp", { true, true, false });
    EXPECT_EQ(fold.member_since(1), 100);
    EXPECT_EQ(fold.members(), (std::vector<bool> { true, true, false }));
    EXPECT_FALSE(fold.paused());
    EXPECT_EQ(fold.policy(), "lbbsp-cpu/ema");
}
