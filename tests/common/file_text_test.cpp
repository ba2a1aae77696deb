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

TEST_F(FileText, AnOwnFileReplacesAFifoALinkAndAnOldFileWithoutTouchingWhatTheyLeadTo)
{
    const auto write_own = [](const fs::path& path, const std::string& text) {
        const int fd = create_own_file(path);
        if (fd < 0)
            return false;
        const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        return written;
    };
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    ASSERT_TRUE(write_own(dir / "fifo", "ours\n")) << "no reader: not waited for";
    EXPECT_EQ(read_file_text(dir / "fifo", 1024), "ours\n");

    std::ofstream(dir / "elsewhere") << "someone else's\n";
    fs::create_symlink(dir / "elsewhere", dir / "link");
    ASSERT_TRUE(write_own(dir / "link", "ours\n"));
    EXPECT_FALSE(fs::is_symlink(dir / "link"));
    EXPECT_EQ(read_file_text(dir / "link", 1024), "ours\n");
    EXPECT_EQ(read_file_text(dir / "elsewhere", 1024), "someone else's\n") << "the link's target is untouched";

    std::ofstream(dir / "old") << "a much longer old text\n";
    ASSERT_TRUE(write_own(dir / "old", "new\n"));
    EXPECT_EQ(read_file_text(dir / "old", 1024), "new\n") << "nothing of the old file is left";

    fs::create_directories(dir / "full" / "inside");
    EXPECT_LT(create_own_file(dir / "full"), 0) << "a folder with something in it is not removed";
    EXPECT_TRUE(fs::exists(dir / "full" / "inside"));
}
