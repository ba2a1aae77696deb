#include "data/idx_reader.h"

#include "common/error.h"

#include <array>
#include <limits>
#include <memory>
#include <string>
#include <zlib.h>

namespace fulcrum::data {

namespace {

struct GzCloser {
    void operator()(gzFile_s* f) const { gzclose(f); }
};

void read_exact(gzFile file, void* out, std::size_t bytes, const std::filesystem::path& path, const char* what)
{
    auto* cursor = static_cast<unsigned char*>(out);
    while (bytes > 0) {
        const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes, 1u << 30));
        const int got = gzread(file, cursor, chunk);
        if (got <= 0) {
            int errnum = 0;
            const char* message = gzerror(file, &errnum);
            throw InputError(path.string(), what,
                got == 0 ? "file ends early (truncated download?)" : std::string("cannot decompress: ") + message);
        }
        cursor += got;
        bytes -= static_cast<std::size_t>(got);
    }
}

} // namespace

IdxArray read_idx(const std::filesystem::path& path)
{
    std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
    if (!file)
        throw InputError(path.string(), "", "cannot open for reading");
    gzbuffer(file.get(), 1 << 20);

    std::array<std::uint8_t, 4> magic {};
    read_exact(file.get(), magic.data(), magic.size(), path, "magic number");
    if (magic[0] != 0 || magic[1] != 0)
        throw InputError(path.string(), "magic number", "expected an IDX file (first two bytes zero)");
    if (magic[2] != 0x08)
        throw InputError(
            path.string(), "element type", "expected unsigned bytes (0x08), found type 0x" + std::to_string(magic[2]));
    const int rank = magic[3];
    if (rank < 1 || rank > 4)
        throw InputError(path.string(), "rank", "expected 1 to 4 dimensions, found " + std::to_string(rank));

    IdxArray array;
    std::size_t count = 1;
    for (int d = 0; d < rank; ++d) {
        std::array<std::uint8_t, 4> be {};
        read_exact(file.get(), be.data(), be.size(), path, "dimensions");
        const std::uint32_t n
            = (std::uint32_t(be[0]) << 24) | (std::uint32_t(be[1]) << 16) | (std::uint32_t(be[2]) << 8) | be[3];
        if (n == 0)
            throw InputError(path.string(), "dimension " + std::to_string(d), "must be positive");
        if (count > (std::size_t(1) << 34) / n)
            throw InputError(path.string(), "dimensions", "implausibly large array");
        count *= n;
        array.dims.push_back(n);
    }
    array.values.resize(count);
    read_exact(file.get(), array.values.data(), count, path, "values");
    return array;
}

} // namespace fulcrum::data
