// read_file_text: the files fulcrumd keeps are read whole, and what is not a regular file is
// refused at once, named, instead of hanging the reader.

#include "common/error.h"
#include "common/file_text.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace fulcrum;
namespace fs = std::filesystem;

namespace {

class FileText : public ::testing::Test {
protected:
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }
    static std::string error_of(const fs::path& path, std::size_t limit = 1024)
    {
        try {
            read_file_text(path, limit);
        } catch (const InputError& e) {
            EXPECT_EQ(e.source(), path.string());
            return e.reason();
        }
        return "read";
    }
    const fs::path dir = fs::temp_directory_path() / ("fulcrum-file-text-" + std::to_string(::getpid()));
};

} // namespace

TEST_F(FileText, ARegularFileIsReadWholeUpToItsLimit)
{
    const std::string text("client tenant=a\n{\"name\": \"x\"}\n\0binary", 38);
    std::ofstream(dir / "entry", std::ios::binary) << text;
    EXPECT_EQ(read_file_text(dir / "entry", text.size()), text);
    EXPECT_EQ(error_of(dir / "entry", text.size() - 1),
        "cannot be read: it holds 38 bytes, more than the 37 such a file may");
    std::ofstream(dir / "empty");
    EXPECT_EQ(read_file_text(dir / "empty", 0), "");
}

TEST_F(FileText, AFifoAFolderAndAMissingFileAreRefusedAtOnce)
{
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    EXPECT_EQ(error_of(dir / "fifo"), "cannot be read: it is a FIFO, not a regular file")
        << "no writer: not waited for";
    fs::create_directories(dir / "folder");
    EXPECT_EQ(error_of(dir / "folder"), "cannot be read: it is a folder, not a regular file");
    EXPECT_EQ(error_of("/dev/null"), "cannot be read: it is a device, not a regular file");
    EXPECT_EQ(error_of(dir / "missing"), "cannot be read");

    EXPECT_EQ(not_a_regular_file(dir / "fifo"), "a FIFO");
    EXPECT_EQ(not_a_regular_file(dir / "folder"), "a folder");
    EXPECT_EQ(not_a_regular_file(dir / "missing"), std::nullopt) << "absent: for the caller to create";
    std::ofstream(dir / "file");
    EXPECT_EQ(not_a_regular_file(dir / "file"), std::nullopt);
}
