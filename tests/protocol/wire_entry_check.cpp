// Compiled (not linked) by two ctests: WireEntries.AMessageWithAnEntryCompiles and
// WireEntries.AMessageWithoutAnEntryDoesNotCompile (with FULCRUM_UNHANDLED). Encoding,
// decoding and naming visit the message variant, so every alternative needs its Wire entry.

#include "protocol/codec_support.h"

namespace fulcrum::protocol::detail {

struct Handled {
    int x = 0;
};

template <> struct Wire<Handled> : NamedAs<"handled"> {
    static void encode(const Handled& m, json::object& o) { o["x"] = m.x; }
    static Handled decode(std::string_view, const Fields& f) { return Handled { static_cast<int>(f.integer("x")) }; }
};

#ifdef FULCRUM_UNHANDLED
struct Unhandled { };
using Messages = std::variant<Handled, Unhandled>;
#else
using Messages = std::variant<Handled>;
#endif

json::object write(const Messages& m)
{
    return write_message(m);
}
Messages read(std::string_view type, const Fields& f)
{
    return read_message<Messages>(type, f);
}
std::string_view name(const Messages& m)
{
    return name_message(m);
}

} // namespace fulcrum::protocol::detail
