#include "common/file_text.h"

#include "common/error.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fulcrum {

namespace {

std::string kind_of(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a plain file";
}

class Descriptor {
public:
    explicit Descriptor(int fd)
        : fd_(fd)
    {
    }
    ~Descriptor()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

} // namespace

std::optional<std::string> not_a_regular_file(const std::filesystem::path& path)
{
    struct stat info { };
    if (::stat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode))
        return std::nullopt;
    return kind_of(info.st_mode);
}

int create_own_file(const std::filesystem::path& path)
{
    std::error_code ec;
    std::filesystem::remove(path, ec); // a link itself, not its target
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
}

std::string read_file_text(const std::filesystem::path& path, std::size_t max_bytes)
{
    const std::string name = path.string();
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    // O_NOCTTY: a terminal linked in its place does not become fulcrumd's.
    const Descriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (file.get() < 0)
        throw InputError(name, "", "cannot be read");
    struct stat info { };
    if (::fstat(file.get(), &info) != 0)
        throw InputError(name, "", "cannot be read");
    if (!S_ISREG(info.st_mode))
        throw InputError(name, "", "cannot be read: it is " + kind_of(info.st_mode) + ", not a regular file");
    if (static_cast<std::size_t>(info.st_size) > max_bytes)
        throw InputError(name, "",
            "cannot be read: it holds " + std::to_string(info.st_size) + " bytes, more than the "
                + std::to_string(max_bytes) + " such a file may");
    std::string text;
    text.resize(static_cast<std::size_t>(info.st_size));
    std::size_t have = 0;
    for (;;) {
        if (have > max_bytes) // it grew since fstat
            throw InputError(name, "",
                "cannot be read: it holds more than the " + std::to_string(max_bytes) + " bytes such a file may");
        if (have == text.size()) // read on: to its end, or to one byte past the limit
            text.resize(std::min(text.size() + 4096, max_bytes + 1));
        const ssize_t n = ::read(file.get(), text.data() + have, text.size() - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw InputError(name, "", "cannot be read");
        if (n == 0)
            break;
        have += static_cast<std::size_t>(n);
    }
    text.resize(have);
    return text;
}

} // namespace fulcrum
