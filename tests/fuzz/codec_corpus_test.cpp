#include <cstdint>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// The fuzz target's seed corpus, replayed in every build (the fuzzer itself needs clang).
TEST(CodecFuzzCorpus, EverySeedDecodesOrIsRefusedAndReencodesCleanly)
{
    const std::filesystem::path corpus = std::filesystem::path(FULCRUM_SOURCE_DIR) / "tests/fuzz/corpus";
    int seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0)
            << entry.path();
        ++seeds;
    }
    EXPECT_GE(seeds, 10);
}
