#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace fulcrum {

// The whole text of a file that fulcrumd keeps or reads again on its own: the job journal's
// entries and markers, a job's start marker, the token file. Only a regular file is read,
// and it is opened without blocking: a FIFO or a device left in its place would otherwise
// hang fulcrumd at its start, or an I/O thread at an upgrade. (A file named on a command
// line may be a pipe, `<(...)`, and is read as a stream instead.)
// At most `max_bytes`, so a stray huge file is refused instead of read into memory. Throws
// InputError naming the path: "cannot be read" (with why, when it is not a missing or
// unreadable file).
std::string read_file_text(const std::filesystem::path& path, std::size_t max_bytes);

// What `path` is when it exists and is not a regular file ("a FIFO", "a folder", ...), for
// a reader that opens it otherwise (SQLite, which would wait on a FIFO for a writer).
// Follows symbolic links; never blocks.
std::optional<std::string> not_a_regular_file(const std::filesystem::path& path);

// A new, empty file of fulcrumd's own at `path`, opened for writing: the descriptor, or -1
// when it cannot be made. The name is fulcrumd's: whatever is there is removed first (a
// FIFO, whose open would wait for a reader; a link, whose target would be written; an empty
// folder), and the file is created exclusively, never following a link, so one put back
// meanwhile makes the open fail instead of redirecting it.
int create_own_file(const std::filesystem::path& path);

// The limit of those files: far above any real one (a scenario is at most a frame).
inline constexpr std::size_t kMaxStateFileBytes = 16u << 20;

} // namespace fulcrum
