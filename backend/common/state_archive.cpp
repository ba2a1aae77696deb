#include "common/state_archive.h"

#include "common/error.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>
#include <vector>

namespace fulcrum {

void StateWriter::put(std::string_view text)
{
    put(static_cast<std::uint64_t>(text.size()));
    bytes_.append(text);
}

namespace {

// Before an engine's words, where an older checkpoint has the length of its text form
// (a few thousand): no text is this long.
constexpr std::uint64_t kEngineWordsTag = 0xFFFF'FFFF'FFFF'FF01ULL;
constexpr std::size_t kMaxEngineWords = 4096;
// Before 4-byte indices, where an older checkpoint has their count: no count is this large.
constexpr std::uint64_t kNarrowIndicesTag = 0xFFFF'FFFF'FFFF'FF02ULL;

std::vector<std::uint64_t> text_form_numbers(const Rng& rng)
{
    std::ostringstream out;
    out << rng;
    std::istringstream in(out.str());
    std::vector<std::uint64_t> words;
    for (std::uint64_t word = 0; in >> word;)
        words.push_back(word);
    return words;
}

// Whether an engine's object holds exactly the numbers of its text form, in order (as
// libstdc++'s does: the state's words, then the position in them). Checked once, on an
// engine of this very build; where it holds, put() copies the object instead of printing
// and reading back the text, and writes the same words.
bool image_is_text_form()
{
    static const bool holds = [] {
        if constexpr (!std::is_trivially_copyable_v<Rng> || sizeof(Rng) % sizeof(std::uint64_t) != 0) {
            return false;
        } else {
            Rng probe(20261129);
            probe.discard(1000);
            const std::vector<std::uint64_t> numbers = text_form_numbers(probe);
            std::vector<std::uint64_t> image(sizeof(Rng) / sizeof(std::uint64_t));
            std::memcpy(image.data(), &probe, sizeof(Rng));
            return numbers == image;
        }
    }();
    return holds;
}

} // namespace

void StateWriter::put(const Rng& rng)
{
    put(kEngineWordsTag);
    if (image_is_text_form()) {
        put(static_cast<std::uint64_t>(sizeof(Rng) / sizeof(std::uint64_t)));
        bytes_.append(reinterpret_cast<const char*>(&rng), sizeof(Rng));
    } else {
        put(text_form_numbers(rng));
    }
}

void StateWriter::put_indices(const std::vector<std::int64_t>& indices)
{
    constexpr std::int64_t narrow = std::numeric_limits<std::uint32_t>::max();
    if (!std::ranges::all_of(indices, [](std::int64_t i) { return i >= 0 && i <= narrow; })) {
        put(indices);
        return;
    }
    put(kNarrowIndicesTag);
    put(static_cast<std::uint64_t>(indices.size()));
    const std::size_t at = bytes_.size();
    bytes_.resize(at + indices.size() * sizeof(std::uint32_t));
    for (std::size_t i = 0; i < indices.size(); ++i) {
        const auto index = static_cast<std::uint32_t>(indices[i]);
        std::memcpy(bytes_.data() + at + i * sizeof index, &index, sizeof index);
    }
}

StateReader::StateReader(std::string_view bytes, std::string source)
    : bytes_(bytes)
    , source_(std::move(source))
{
}

void StateReader::fail(const char* what, const std::string& reason) const
{
    throw InputError(source_, std::string("checkpoint: ") + what, reason);
}

const char* StateReader::take(std::size_t n, const char* what)
{
    if (n > bytes_.size() - position_)
        fail(what, "the checkpoint ends early (" + std::to_string(bytes_.size()) + " bytes)");
    const char* at = bytes_.data() + position_;
    position_ += n;
    return at;
}

std::size_t StateReader::count(const char* what, std::size_t element_size)
{
    const auto n = get<std::uint64_t>(what);
    if (element_size > 0 && n > (bytes_.size() - position_) / element_size)
        fail(what,
            "holds a length of " + std::to_string(n) + ", more than is left: the checkpoint ends early or is damaged");
    return static_cast<std::size_t>(n);
}

std::size_t StateReader::array_size(const char* what, std::size_t element_size)
{
    return count(what, element_size);
}

std::string StateReader::get_string(const char* what)
{
    const std::size_t n = count(what, 1);
    return std::string(take(n, what), n);
}

void StateReader::get_indices(std::vector<std::int64_t>& indices, const char* what)
{
    if (get<std::uint64_t>(what) != kNarrowIndicesTag) { // an older checkpoint: 8-byte indices
        position_ -= sizeof(std::uint64_t);
        get(indices, what);
        return;
    }
    const std::size_t n = count(what, sizeof(std::uint32_t));
    const char* narrow = take(n * sizeof(std::uint32_t), what);
    indices.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t index = 0;
        std::memcpy(&index, narrow + i * sizeof index, sizeof index);
        indices[i] = index;
    }
}

void StateReader::get(Rng& rng, const char* what)
{
    std::string text;
    if (get<std::uint64_t>(what) == kEngineWordsTag) {
        std::vector<std::uint64_t> words;
        get(words, what);
        if (words.size() > kMaxEngineWords)
            fail(what, "holds " + std::to_string(words.size()) + " words, more than a random stream's state");
        for (const std::uint64_t word : words)
            text.append(std::to_string(word)).push_back(' ');
    } else { // an older checkpoint: the text form, after its length
        position_ -= sizeof(std::uint64_t);
        text = get_string(what);
    }
    // Read through the standard text form, as this build's library writes and reads it: a
    // word count or value it does not take is refused here, and so are words left over.
    std::istringstream in(text);
    Rng read;
    in >> read;
    if (!in || !(in >> std::ws).eof())
        fail(what, "is not a random stream's state");
    if (image_is_text_form()) { // the last word is where the engine stands in its state
        std::uint64_t position = 0;
        std::memcpy(&position, reinterpret_cast<const char*>(&read) + sizeof(Rng) - sizeof position, sizeof position);
        if (position > Rng::state_size)
            fail(what,
                "stands at word " + std::to_string(position) + " of a state of " + std::to_string(Rng::state_size));
    }
    rng = read;
}

} // namespace fulcrum
