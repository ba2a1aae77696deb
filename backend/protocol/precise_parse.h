#pragma once

// Internal to the protocol library (included by codec.cpp only): Boost.JSON 1.81's parser
// may round a decimal number to a neighbour of the nearest double, which would make a
// replayed record differ from the recorded one in the last bit. This parser reads numbers
// with std::from_chars (correctly rounded), so every double the codec writes in its
// shortest round-trip form comes back bit for bit.

#include <boost/json/value.hpp>
#include <string_view>

namespace fulcrum::protocol::detail {

boost::json::value parse_precise(
    std::string_view text, boost::system::error_code& ec, boost::json::storage_ptr storage, std::size_t max_depth);

} // namespace fulcrum::protocol::detail
