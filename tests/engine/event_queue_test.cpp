#include "engine/event_queue.h"
#include "engine/pacer.h"

#include <gtest/gtest.h>

using namespace fulcrum;

TEST(EventQueue, RunsEventsInTimeOrderAndTiesInSchedulingOrder)
{
    engine::EventQueue queue;
    std::vector<int> order;
    queue.schedule(2.0, [&] { order.push_back(3); });
    queue.schedule(1.0, [&] { order.push_back(1); });
    queue.schedule(1.0, [&] { order.push_back(2); });
    queue.run();
    EXPECT_EQ(order, (std::vector<int> { 1, 2, 3 }));
    EXPECT_EQ(queue.now(), 2.0);
}

TEST(EventQueue, EventsMayScheduleLaterEvents)
{
    engine::EventQueue queue;
    int fired = 0;
    queue.schedule(1.0, [&] { queue.schedule(queue.now() + 1.0, [&] { ++fired; }); });
    queue.run();
    EXPECT_EQ(fired, 1);
    EXPECT_EQ(queue.now(), 2.0);
}

TEST(EventQueue, SchedulingInThePastIsALogicError)
{
    engine::EventQueue queue;
    queue.schedule(5.0, [] {});
    queue.step();
    EXPECT_THROW(queue.schedule(4.0, [] {}), std::logic_error);
}

TEST(Pacer, WaitsForVirtualTimeAtTheGivenSpeed)
{
    engine::Pacer pacer(100.0); // 100 virtual seconds per wall second
    pacer.wait_until(5.0); // 50 ms of wall time
    EXPECT_GE(pacer.wall_seconds(), 0.049);
}

TEST(Pacer, StopRequestEndsTheWait)
{
    engine::Pacer pacer(1.0);
    std::atomic<bool> stop { true };
    pacer.wait_until(60.0, &stop);
    EXPECT_LT(pacer.wall_seconds(), 1.0);
}
