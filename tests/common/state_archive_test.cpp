// A checkpoint's random streams: written as their words, read back as the same engine, and
// read from checkpoints that hold the older text form; damaged ones refused by name.
#include "common/error.h"
#include "common/state_archive.h"

#include <cstring>
#include <gtest/gtest.h>
#include <iterator>
#include <sstream>

using namespace fulcrum;

namespace {

Rng advanced(std::uint64_t seed, int draws)
{
    Rng rng(seed);
    rng.discard(static_cast<unsigned long long>(draws));
    return rng;
}

std::string text_of(const Rng& rng)
{
    std::ostringstream out;
    out << rng;
    return out.str();
}

} // namespace

TEST(StateArchive, AnEngineComesBackAsTheSameStreamInLessThanHalfItsTextsBytes)
{
    for (const int draws : { 0, 1, 311, 312, 313, 5000 }) {
        SCOPED_TRACE(draws);
        const Rng written = advanced(7, draws);
        StateWriter out;
        out.put(written);
        out.put(std::uint64_t { 42 });
        EXPECT_LT(out.bytes().size() * 2, text_of(written).size()) << "words, not text";
        StateReader in(out.bytes(), "test");
        Rng read;
        in.get(read, "stream");
        EXPECT_EQ(read, written);
        EXPECT_EQ(in.get<std::uint64_t>("after"), 42u) << "the fields after it are where they were";
        EXPECT_TRUE(in.at_end());
        Rng again = written;
        for (int i = 0; i < 1000; ++i)
            ASSERT_EQ(read(), again());
    }
}

// Checkpoints written before the words held the engine's text form after its length: a
// job recovered from one resumes the same stream.
TEST(StateArchive, ReadsTheTextFormOlderCheckpointsHold)
{
    const Rng written = advanced(11, 777);
    StateWriter out;
    out.put(text_of(written));
    out.put(std::uint64_t { 9 });
    StateReader in(out.bytes(), "old.db job 1");
    Rng read;
    in.get(read, "sampler stream");
    EXPECT_EQ(read, written);
    EXPECT_EQ(in.get<std::uint64_t>("after"), 9u);
}

TEST(StateArchive, ADamagedStreamIsRefusedByName)
{
    const auto refusal = [](const std::string& bytes) {
        StateReader in(bytes, "runs/job-3.db job 3");
        Rng read;
        try {
            in.get(read, "sampler stream");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("read");
    };
    const auto words = [](const std::vector<std::uint64_t>& w) {
        StateWriter out;
        out.put(std::uint64_t { 0xFFFF'FFFF'FFFF'FF01ULL });
        out.put(w);
        return out.bytes();
    };
    EXPECT_NE(refusal(words({ 1, 2, 3 })).find("sampler stream"), std::string::npos) << "too few words";
    StateWriter whole;
    whole.put(advanced(3, 10));
    // Where the engine's text form ends with its position in the state (libstdc++'s does), a
    // position past the state's end, which the text form's reader takes as it is, is refused.
    std::istringstream numbers(text_of(advanced(3, 10)));
    const auto count = std::distance(std::istream_iterator<std::uint64_t>(numbers), {});
    if (count == static_cast<std::ptrdiff_t>(sizeof(Rng) / sizeof(std::uint64_t))) {
        std::string beyond = whole.bytes();
        const std::uint64_t position = 100000;
        std::memcpy(beyond.data() + beyond.size() - sizeof position, &position, sizeof position);
        EXPECT_NE(refusal(beyond).find("stands at word 100000"), std::string::npos) << refusal(beyond);
    }
    std::vector<std::uint64_t> longer(static_cast<std::size_t>(count) + 5, 1);
    EXPECT_NE(refusal(words(longer)).find("is not a random stream's state"), std::string::npos) << "words left over";
    StateWriter text;
    text.put(std::string("not a stream"));
    EXPECT_NE(refusal(text.bytes()).find("is not a random stream's state"), std::string::npos);
    EXPECT_NE(refusal(whole.bytes().substr(0, 100)).find("sampler stream"), std::string::npos) << "cut short";
}
