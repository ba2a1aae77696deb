#include "common/error.h"
#include "data/fashion_mnist.h"
#include "data/idx_reader.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <zlib.h>

using namespace fulcrum;

namespace {

class IdxFiles : public ::testing::Test {
protected:
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fulcrum-idx-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }

    std::filesystem::path write_gz(const std::string& name, const std::vector<std::uint8_t>& bytes)
    {
        const auto path = dir / name;
        gzFile f = gzopen(path.c_str(), "wb");
        gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
        gzclose(f);
        return path;
    }

    static std::vector<std::uint8_t> images(std::uint32_t n, std::uint32_t rows, std::uint32_t cols)
    {
        std::vector<std::uint8_t> bytes { 0, 0, 8, 3 };
        for (std::uint32_t d : { n, rows, cols })
            for (int shift = 24; shift >= 0; shift -= 8)
                bytes.push_back(static_cast<std::uint8_t>(d >> shift));
        for (std::uint32_t i = 0; i < n * rows * cols; ++i)
            bytes.push_back(static_cast<std::uint8_t>(i % 256));
        return bytes;
    }

    static std::vector<std::uint8_t> labels(std::vector<std::uint8_t> values)
    {
        const auto n = static_cast<std::uint32_t>(values.size());
        std::vector<std::uint8_t> bytes { 0, 0, 8, 1, std::uint8_t(n >> 24), std::uint8_t(n >> 16),
            std::uint8_t(n >> 8), std::uint8_t(n) };
        bytes.insert(bytes.end(), values.begin(), values.end());
        return bytes;
    }
};

} // namespace

TEST_F(IdxFiles, ReadsDimensionsAndValuesOfGzipFile)
{
    const auto path = write_gz("images.gz", images(3, 2, 2));
    const data::IdxArray array = data::read_idx(path);
    EXPECT_EQ(array.dims, (std::vector<std::uint32_t> { 3, 2, 2 }));
    ASSERT_EQ(array.values.size(), 12u);
    EXPECT_EQ(array.values[11], 11);
}

TEST_F(IdxFiles, PairBecomesColumnPerSampleScaledToUnitRange)
{
    const auto dataset
        = data::load_idx_pair(write_gz("i.gz", images(3, 2, 2)), write_gz("l.gz", labels({ 2, 0, 1 })), 3, "tiny");
    EXPECT_EQ(dataset.size(), 3);
    EXPECT_EQ(dataset.dim(), 4);
    EXPECT_FLOAT_EQ(dataset.features(0, 1), 4.0f / 255.0f); // sample 1 starts at byte 4
    EXPECT_EQ(dataset.labels, (std::vector<std::int32_t> { 2, 0, 1 }));
}

TEST_F(IdxFiles, TruncatedFileNamesFileAndPart)
{
    auto bytes = images(3, 2, 2);
    bytes.resize(bytes.size() - 5);
    const auto path = write_gz("cut.gz", bytes);
    try {
        data::read_idx(path);
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(e.source(), path.string());
        EXPECT_EQ(e.field(), "values");
        EXPECT_NE(std::string(e.what()).find("ends early"), std::string::npos);
    }
}

TEST_F(IdxFiles, WrongMagicIsRefused)
{
    const auto path = write_gz("bad.gz", { 1, 2, 3, 4, 5, 6, 7, 8 });
    EXPECT_THROW(data::read_idx(path), InputError);
}

TEST_F(IdxFiles, LabelOutOfRangeIsRefusedWithIndex)
{
    try {
        data::load_idx_pair(write_gz("i.gz", images(2, 1, 1)), write_gz("l.gz", labels({ 0, 9 })), 3, "x");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "label 1");
    }
}

TEST_F(IdxFiles, CountMismatchIsRefused)
{
    EXPECT_THROW(
        data::load_idx_pair(write_gz("i.gz", images(3, 1, 1)), write_gz("l.gz", labels({ 0, 1 })), 3, "x"), InputError);
}

TEST(FashionMnist, MissingDirectoryNamesTheDebianPackage)
{
    try {
        data::load_fashion_mnist("/nonexistent/fashion-mnist");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos);
    }
}

TEST(FashionMnist, LoadsSixtyThousandTrainingAndTenThousandTestImagesWhenInstalled)
{
    if (!std::filesystem::exists(data::kFashionMnistDir))
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    const auto data = data::load_fashion_mnist();
    EXPECT_EQ(data.train->size(), 60000);
    EXPECT_EQ(data.test->size(), 10000);
    EXPECT_EQ(data.train->dim(), 784);
    // Standardised with the training statistics.
    EXPECT_NEAR(data.train->features.mean(), 0.0, 1e-3);
}
