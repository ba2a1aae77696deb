#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace fulcrum::data {

// An IDX file (the MNIST family's format): big-endian dimensions, then unsigned bytes.
struct IdxArray {
    std::vector<std::uint32_t> dims;
    std::vector<std::uint8_t> values;
};

// Reads a gzip-compressed or plain IDX file of unsigned bytes (type 0x08).
// Throws InputError naming the file and what is wrong with it.
IdxArray read_idx(const std::filesystem::path& path);

} // namespace fulcrum::data
