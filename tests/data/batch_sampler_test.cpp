#include "common/error.h"
#include "data/batch_sampler.h"
#include "data/synthetic.h"

#include <gtest/gtest.h>
#include <set>

using namespace fulcrum;

TEST(BatchSampler, SameSeedGivesSameBatchesWhateverTheSizes)
{
    data::BatchSampler a(100, 7), b(100, 7);
    for (std::int32_t size : { 3, 17, 50, 1, 64 }) {
        const auto x = a.next(size);
        const std::vector<std::int64_t> copy(x.begin(), x.end());
        const auto y = b.next(size);
        EXPECT_EQ(copy, std::vector<std::int64_t>(y.begin(), y.end()));
    }
}

TEST(BatchSampler, OnePassVisitsEverySampleOnce)
{
    data::BatchSampler sampler(90, 3);
    std::multiset<std::int64_t> seen;
    for (int k = 0; k < 9; ++k)
        for (auto i : sampler.next(10))
            seen.insert(i);
    EXPECT_EQ(seen.size(), 90u);
    EXPECT_EQ(std::set<std::int64_t>(seen.begin(), seen.end()).size(), 90u);
}

TEST(BatchSampler, BatchLargerThanRemainderWrapsIntoNewPermutation)
{
    data::BatchSampler sampler(10, 1);
    EXPECT_EQ(sampler.next(25).size(), 25u);
    EXPECT_EQ(sampler.samples_drawn(), 25);
}

TEST(BatchSampler, DifferentSeedsGiveDifferentOrders)
{
    data::BatchSampler a(1000, 1), b(1000, 2);
    const auto x = a.next(20);
    const std::vector<std::int64_t> copy(x.begin(), x.end());
    const auto y = b.next(20);
    EXPECT_NE(copy, std::vector<std::int64_t>(y.begin(), y.end()));
}

TEST(Gather, CopiesColumnsAndLabels)
{
    const auto data = data::make_synthetic(
        { .train_size = 50, .test_size = 10, .dim = 5, .classes = 3, .separation = 3, .seed = 4 });
    const std::vector<std::int64_t> indices { 4, 0, 49 };
    Eigen::MatrixXf features;
    std::vector<std::int32_t> labels;
    data::gather(*data.train, indices, features, labels);
    ASSERT_EQ(features.cols(), 3);
    EXPECT_EQ(features.col(2), data.train->features.col(49));
    EXPECT_EQ(labels[0], data.train->labels[4]);
}

TEST(Synthetic, IsDeterministicForASeed)
{
    const auto a = data::make_synthetic({ .seed = 9 });
    const auto b = data::make_synthetic({ .seed = 9 });
    EXPECT_EQ(a.train->features, b.train->features);
    EXPECT_EQ(a.test->labels, b.test->labels);
}

// A checkpoint's sampler resumes the same batches: from its 4-byte indices, and from the
// 8-byte ones checkpoints written before them hold; a permutation naming a sample beyond the
// training set is refused by name, not read past the set's end.
TEST(BatchSampler, ResumesFromACheckpointOfEitherIndexWidth)
{
    data::BatchSampler sampler(1000, 5);
    sampler.next(700);
    StateWriter out;
    sampler.save_state(out);
    for (const bool older : { false, true }) {
        SCOPED_TRACE(older);
        StateWriter written;
        if (older) { // the stream, the 8-byte permutation, the cursor and the count, as before
            StateReader parts(out.bytes(), "test");
            Rng rng;
            parts.get(rng, "stream");
            std::vector<std::int64_t> permutation;
            parts.get_indices(permutation, "permutation");
            written.put(rng);
            written.put(permutation);
            written.put(parts.get<std::uint64_t>("cursor"));
            written.put(parts.get<std::int64_t>("drawn"));
        } else {
            written = out;
            EXPECT_LT(out.bytes().size(), 1000 * 4 + 3000) << "4-byte indices";
        }
        data::BatchSampler resumed(1000, 99);
        StateReader in(written.bytes(), "test");
        resumed.load_state(in);
        data::BatchSampler going_on = sampler;
        for (const int batch : { 200, 300, 1500 }) {
            const auto want = going_on.next(batch);
            const std::vector<std::int64_t> expected(want.begin(), want.end());
            const auto got = resumed.next(batch);
            EXPECT_EQ(std::vector<std::int64_t>(got.begin(), got.end()), expected);
        }
    }
    StateWriter empty; // a damaged checkpoint: no sample to draw from, and the cursor at 0
    Rng stream;
    empty.put(stream);
    empty.put_indices({});
    empty.put(std::uint64_t { 0 });
    empty.put(std::int64_t { 0 });
    StateReader empty_in(empty.bytes(), "runs/job-2.db job 2");
    data::BatchSampler refused(1000, 5);
    EXPECT_THROW(refused.load_state(empty_in), InputError);
    data::BatchSampler smaller(500, 5);
    StateReader in(out.bytes(), "runs/job-2.db job 2");
    try {
        smaller.load_state(in);
        FAIL() << "a permutation of 1,000 samples read into a set of 500";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("outside the training set of 500"), std::string::npos) << e.what();
    }
}
