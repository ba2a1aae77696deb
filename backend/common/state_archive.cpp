#include "common/state_archive.h"

#include "common/error.h"

#include <sstream>

namespace fulcrum {

void StateWriter::put(std::string_view text)
{
    put(static_cast<std::uint64_t>(text.size()));
    bytes_.append(text);
}

void StateWriter::put(const Rng& rng)
{
    std::ostringstream out;
    out << rng;
    put(std::string_view(out.str()));
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

void StateReader::get(Rng& rng, const char* what)
{
    std::istringstream in(get_string(what));
    in >> rng;
    if (!in)
        fail(what, "is not a random stream's state");
}

} // namespace fulcrum
