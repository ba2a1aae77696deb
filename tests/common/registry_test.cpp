// The one registry shape (common/registry.h): a kind is found by its name or as a member of a
// numbered family, and every refusal says what is expected.
#include "common/registry.h"

#include <gtest/gtest.h>

using namespace fulcrum;

namespace {

struct ToyEntry {
    KindInfo kind;
    int value;
};

constexpr ToyEntry kToys[] = {
    { { "ff", "first fit" }, 1 },
    { { "lwf-K", "least workload first on K servers", true, {}, {}, "kappa spread" }, 2 },
    { { "fixed", "given sizes", false, "barrier", "batch_sizes" }, 3 },
};

constexpr Registry<ToyEntry> kToyRegistry { "toy", kToys };

} // namespace

TEST(Registry, FindsAKindByNameOrAsAMemberOfItsNumberedFamily)
{
    ASSERT_TRUE(kToyRegistry.find("ff"));
    EXPECT_EQ(kToyRegistry.find("ff")->entry.value, 1);
    EXPECT_EQ(kToyRegistry.find("ff")->number, 0);
    ASSERT_TRUE(kToyRegistry.find("lwf-12"));
    EXPECT_EQ(kToyRegistry.find("lwf-12")->entry.value, 2);
    EXPECT_EQ(kToyRegistry.find("lwf-12")->number, 12);
    for (const char* bad : { "lwf-0", "lwf-", "lwf", "lwf-K", "lwf-1x", "lwf--1", "LWF-1", "ff ", "", "fixed-1" })
        EXPECT_FALSE(kToyRegistry.find(bad)) << bad;
}

TEST(Registry, ARefusalNamesTheKindAndWhatIsExpected)
{
    EXPECT_EQ(kToyRegistry.expected(), "ff, lwf-K with K >= 1 (e.g. lwf-1) or fixed");
    try {
        kToyRegistry.at("best");
        ADD_FAILURE() << "best was found";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown toy 'best' (expected ff, lwf-K with K >= 1 (e.g. lwf-1) or fixed)");
    }
}

TEST(Registry, ItsCatalogueCarriesEachKindsFamilyAndFields)
{
    const std::vector<CatalogueEntry> catalogue = kToyRegistry.catalogue();
    ASSERT_EQ(catalogue.size(), 3u);
    EXPECT_EQ(catalogue[0], (CatalogueEntry { "ff", "first fit", "", {}, {} }));
    EXPECT_EQ(
        catalogue[1], (CatalogueEntry { "lwf-K", "least workload first on K servers", "", {}, { "kappa", "spread" } }));
    EXPECT_EQ(catalogue[2], (CatalogueEntry { "fixed", "given sizes", "barrier", { "batch_sizes" }, {} }));
    EXPECT_EQ(kToyRegistry.names(), (std::vector<std::string> { "ff", "lwf-K", "fixed" }));
}
