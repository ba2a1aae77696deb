#include "common/error.h"
#include "sched/cluster.h"
#include "sched/tenant_quota.h"
#include "temp_file.h"

#include <gtest/gtest.h>

using namespace fulcrum::sched;

namespace {

// A: 8 GPUs, borrows at weight 1; B: 4 GPUs, borrows at weight 3; C: 4 GPUs, never borrows.
TenantQuotas three_tenants()
{
    TenantQuotas q;
    q.named["A"] = { .gpus = 8, .borrow = true, .weight = 1 };
    q.named["B"] = { .gpus = 4, .borrow = true, .weight = 3 };
    q.named["C"] = { .gpus = 4, .borrow = false, .weight = 1 };
    return q;
}

} // namespace

TEST(TenantQuota, WithoutQuotasEveryJobMayTakeEveryIdleGpu)
{
    const TenantQuotas none;
    EXPECT_FALSE(none.active());
    EXPECT_EQ(quota_room(none, {}, "A", 7), 7);
    EXPECT_EQ(serve_order(none, { { "A", 100 } }, "A", 4), ServeOrder {});
    EXPECT_TRUE(reclaim_plan(none, { { "B", 16 } }, "A", 4, 0, 1).empty());
}

TEST(TenantQuota, ATenantThatDoesNotBorrowStaysWithinItsQuota)
{
    const TenantQuotas q = three_tenants();
    EXPECT_EQ(quota_room(q, { { "C", 1 } }, "C", 10), 3);
    EXPECT_EQ(quota_room(q, { { "C", 1 } }, "C", 2), 2) << "never more than is idle";
    EXPECT_EQ(quota_room(q, { { "C", 6 } }, "C", 10), 0) << "over its quota (an operator's resize): nothing more";
    EXPECT_EQ(quota_room(q, { { "A", 8 } }, "A", 5), 5) << "a borrower takes every idle GPU";
}

TEST(TenantQuota, AnUnnamedTenantHasNoQuotaAndBorrowsAtWeightOne)
{
    const TenantQuotas q = three_tenants();
    EXPECT_EQ(q.of("default"), (TenantQuota { .gpus = 0, .borrow = true, .weight = 1 }));
    EXPECT_EQ(borrowed_by(q, { { "default", 3 } }, "default"), 3);
    EXPECT_TRUE(serve_order(q, {}, "default", 1).borrowing);
}

TEST(TenantQuota, OwnersAreServedBeforeBorrowersAndBorrowersByWeight)
{
    const TenantQuotas q = three_tenants();
    const TenantHeld held { { "A", 10 }, { "B", 7 }, { "C", 0 } };
    // C asks within its quota: first.
    EXPECT_LT(serve_order(q, held, "C", 4), serve_order(q, held, "A", 1));
    EXPECT_FALSE(serve_order(q, held, "C", 4).borrowing);
    // A borrowed 2 at weight 1 (2 per weight), B 3 at weight 3 (1 per weight): B first.
    EXPECT_DOUBLE_EQ(serve_order(q, held, "A", 1).borrowed_per_weight, 2.0);
    EXPECT_DOUBLE_EQ(serve_order(q, held, "B", 1).borrowed_per_weight, 1.0);
    EXPECT_LT(serve_order(q, held, "B", 1), serve_order(q, held, "A", 1));
}

TEST(TenantQuota, ReclaimTakesOnlyBorrowedGpusAndOnlyForTheOwnersQuota)
{
    const TenantQuotas q = three_tenants();
    // A holds 12 (4 borrowed), B 4, C 0 and asks for 4 with none idle: A gives 4.
    EXPECT_EQ(reclaim_plan(q, { { "A", 12 }, { "B", 4 } }, "C", 4, 0, 1), (TenantHeld { { "A", 4 } }));
    // One idle already: 3 are reclaimed.
    EXPECT_EQ(reclaim_plan(q, { { "A", 11 }, { "B", 4 } }, "C", 4, 1, 1), (TenantHeld { { "A", 3 } }));
    // C asks for 6: only 4 are within its quota, so only those are reclaimed.
    EXPECT_EQ(reclaim_plan(q, { { "A", 12 }, { "B", 4 } }, "C", 6, 0, 1), (TenantHeld { { "A", 4 } }));
    // A borrower asking beyond its quota reclaims nothing from another borrower.
    EXPECT_TRUE(reclaim_plan(q, { { "A", 8 }, { "B", 8 } }, "A", 2, 0, 1).empty());
    // Reclaiming everything A borrowed would still not give C the 4 it needs to start: nothing.
    EXPECT_TRUE(reclaim_plan(q, { { "A", 10 }, { "B", 4 } }, "C", 4, 1, 4).empty());
    EXPECT_EQ(reclaim_plan(q, { { "A", 10 }, { "B", 4 } }, "C", 4, 1, 3), (TenantHeld { { "A", 2 } }));
    // Nobody borrowed: nothing to take, though C is owed.
    EXPECT_TRUE(reclaim_plan(q, { { "A", 8 }, { "B", 4 } }, "C", 4, 0, 1).empty());
}

TEST(TenantQuota, ReclaimTakesFromTheBorrowersWithTheMostPerWeightFirst)
{
    TenantQuotas q = three_tenants();
    q.named["C"].gpus = 0;
    q.named["D"] = { .gpus = 6, .borrow = false, .weight = 1 };
    // A borrowed 3 (3 per weight), B 6 (2 per weight): A gives until the levels meet at 2 per
    // weight, then they take turns (ties: the first by name) down to 1 per weight each.
    const TenantHeld plan = reclaim_plan(q, { { "A", 11 }, { "B", 10 } }, "D", 6, 0, 1);
    EXPECT_EQ(plan, (TenantHeld { { "A", 3 }, { "B", 3 } }));
    EXPECT_EQ(reclaim_plan(q, { { "A", 11 }, { "B", 10 } }, "D", 1, 0, 1), (TenantHeld { { "A", 1 } }));
}

TEST(TenantQuota, TheClusterFileNamesTenantsQuotasAndWhatRigidBorrowersDo)
{
    const ClusterSpec c = load_cluster(write_temp_file("cluster-tenants.json", R"({"servers": 2, "gpus_per_server": 4,
        "tenants": {"vision": {"gpus": 4, "borrow": true, "weight": 2}, "nlp": {"gpus": 2}},
        "rigid_borrowers": "requeue"})"));
    ASSERT_TRUE(c.tenants.active());
    EXPECT_EQ(c.tenants.of("vision"), (TenantQuota { .gpus = 4, .borrow = true, .weight = 2 }));
    EXPECT_EQ(c.tenants.of("nlp"), (TenantQuota { .gpus = 2, .borrow = false, .weight = 1 }));
    EXPECT_EQ(c.tenants.rigid, RigidBorrowers::Requeue);
    EXPECT_FALSE(load_cluster(write_temp_file("cluster-no-tenants.json", "{}")).tenants.active());
    EXPECT_EQ(load_cluster(write_temp_file("cluster-no-tenants.json", "{}")).tenants.rigid, RigidBorrowers::Wait);

    const auto refused = [](const std::string& text) {
        try {
            load_cluster(write_temp_file("cluster-tenants-bad.json", text));
        } catch (const fulcrum::InputError& e) {
            return e.field() + ": " + e.reason();
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(refused(R"({"tenants": {"a b": {"gpus": 1}}})").rfind("tenants.a b: ", 0), 0u);
    EXPECT_EQ(refused(R"({"tenants": {"a": {"gpus": -1}}})").rfind("tenants.a.gpus", 0), 0u);
    EXPECT_EQ(refused(R"({"tenants": {"a": {"weight": 0}}})").rfind("tenants.a.weight", 0), 0u);
    EXPECT_EQ(refused(R"({"tenants": {"a": {"gpu": 2}}})").rfind("tenants.a", 0), 0u) << "a typo is refused";
    EXPECT_EQ(refused(R"({"tenants": {"a": 4}})").rfind("tenants.a", 0), 0u);
    EXPECT_EQ(refused(R"({"tenants": [1]})").rfind("tenants", 0), 0u);
    EXPECT_EQ(refused(R"({"rigid_borrowers": "kill"})"), "rigid_borrowers: is 'kill', expected wait or requeue");
    const std::string over = refused(R"({"servers": 1, "gpus_per_server": 4, "tenants": {"a": {"gpus": 3},
        "b": {"gpus": 2}}})");
    EXPECT_EQ(over, "tenants: the tenants' quotas add up to 5 GPUs; the cluster has 4 (servers x gpus_per_server)");
}
