#pragma once

#include "common/random.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fulcrum {

// A job's checkpoint is the state of many objects written one after another into one byte
// string (stored in the run store). Each object writes its own fields in a fixed order and
// reads them back in the same order; the archive knows nothing of the objects. Numbers are
// written as their bytes (a checkpoint is resumed on the machine that wrote it, or one of the
// same byte order), floats bit for bit, so a resumed job computes exactly what it would have.
class StateWriter {
public:
    template <typename T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
    void put(T value)
    {
        const auto* bytes = reinterpret_cast<const char*>(&value);
        bytes_.append(bytes, sizeof value);
    }
    void put(bool value) { put(static_cast<std::uint8_t>(value ? 1 : 0)); }
    void put(std::string_view text);
    void put(const std::string& text) { put(std::string_view(text)); }
    void put(const char* text) { put(std::string_view(text)); }
    // The engine's whole state: the numbers of its standard text form (operator<<), written
    // as 8-byte words after a tag. A checkpoint of a 500-worker job holds 1,500 engines:
    // their text (6.4 KB and 22 us each) was a third of its bytes and most of its writing.
    void put(const Rng& rng);

    template <typename T> void put(const std::optional<T>& value)
    {
        put(value.has_value());
        if (value)
            put(*value);
    }
    template <typename T> void put(const std::vector<T>& values)
    {
        put(static_cast<std::uint64_t>(values.size()));
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
            bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
        else
            for (const auto& v : values)
                put(static_cast<T>(v));
    }
    // A run of numbers (an Eigen vector's storage).
    template <typename T>
    requires std::is_arithmetic_v<T>
    void put_array(const T* data, std::size_t count)
    {
        put(static_cast<std::uint64_t>(count));
        bytes_.append(reinterpret_cast<const char*>(data), count * sizeof(T));
    }

    // Sample indices (a sampler's permutation): 4 bytes each where every one fits, after a
    // tag; a 500-worker job's checkpoint held 500 permutations of its training set at 8.
    void put_indices(const std::vector<std::int64_t>& indices);

    const std::string& bytes() const { return bytes_; }
    std::string take() { return std::move(bytes_); }

private:
    std::string bytes_;
};

// Reads what a StateWriter wrote. A checkpoint that ends early or holds an impossible length
// throws InputError naming `source` (the run store and job) and what was being read.
class StateReader {
public:
    StateReader(std::string_view bytes, std::string source);

    template <typename T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T> T get(const char* what)
    {
        T value;
        std::memcpy(&value, take(sizeof value, what), sizeof value);
        return value;
    }
    bool get_bool(const char* what) { return get<std::uint8_t>(what) != 0; }
    std::string get_string(const char* what);
    // An engine written by put(const Rng&), or as its text form (checkpoints written before
    // 2026-11-29).
    void get(Rng& rng, const char* what);
    // Indices written by put_indices, or as a vector of 8-byte ones (checkpoints written
    // before 2026-11-29).
    void get_indices(std::vector<std::int64_t>& indices, const char* what);

    template <typename T> void get(std::vector<T>& values, const char* what)
    {
        const std::size_t n = count(what, std::is_arithmetic_v<T> && !std::is_same_v<T, bool> ? sizeof(T) : 1);
        values.resize(n);
        if constexpr (std::is_same_v<T, bool>) {
            for (std::size_t i = 0; i < n; ++i)
                values[i] = get_bool(what);
        } else if constexpr (std::is_arithmetic_v<T>) {
            if (n > 0)
                std::memcpy(values.data(), take(n * sizeof(T), what), n * sizeof(T));
        } else {
            for (auto& v : values)
                read_into(v, what);
        }
    }
    template <typename T> void get(std::optional<T>& value, const char* what)
    {
        if (get_bool(what)) {
            T v {};
            read_into(v, what);
            value = std::move(v);
        } else {
            value.reset();
        }
    }
    // `count` numbers into storage the caller sized; the stored count must match.
    template <typename T>
    requires std::is_arithmetic_v<T>
    void get_array(T* data, std::size_t expected, const char* what)
    {
        const std::size_t n = count(what, sizeof(T));
        if (n != expected)
            fail(what, "holds " + std::to_string(n) + " values where " + std::to_string(expected) + " were expected");
        if (n > 0)
            std::memcpy(data, take(n * sizeof(T), what), n * sizeof(T));
    }
    // The stored length of the array that follows, for storage the caller sizes itself.
    std::size_t array_size(const char* what, std::size_t element_size);
    template <typename T>
    requires std::is_arithmetic_v<T>
    void get_array_data(T* data, std::size_t n, const char* what)
    {
        if (n > 0)
            std::memcpy(data, take(n * sizeof(T), what), n * sizeof(T));
    }

    bool at_end() const { return position_ == bytes_.size(); }
    [[noreturn]] void fail(const char* what, const std::string& reason) const;

private:
    const char* take(std::size_t n, const char* what);
    std::size_t count(const char* what, std::size_t element_size);
    template <typename T> void read_into(T& v, const char* what)
    {
        if constexpr (std::is_same_v<T, std::string>)
            v = get_string(what);
        else if constexpr (std::is_same_v<T, bool>)
            v = get_bool(what);
        else
            v = get<T>(what);
    }

    std::string_view bytes_;
    std::string source_;
    std::size_t position_ = 0;
};

} // namespace fulcrum
