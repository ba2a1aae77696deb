#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fulcrum::access {

// Failed authentication limited per source (a brute force held off, as fail2ban or nginx's
// limit_req would): after `failures` failed upgrades from one source within `window`, that
// source is answered 429 without its token being read until `window` has passed since the
// limit began. A source is an IPv4 address or an IPv6 /64 (one host's share of a network).
// Times are given by the caller, so a test drives it on its own clock. The sources followed
// are bounded: when the table is full, those with nothing in the window go (a sweep at most
// once a second), and if none has, one followed source is forgotten to make room, so a new
// source is always followed.
class AuthLimiter {
public:
    using Clock = std::chrono::steady_clock;
    struct Options {
        int failures = 20; // 0: no limit (failures are still counted)
        Clock::duration window = std::chrono::seconds(60);
        std::size_t sources = 65'536;
    };
    struct Totals {
        std::uint64_t failures = 0; // failed upgrades (and /metrics requests) with a bad or no token
        std::uint64_t limits = 0; // limits begun
        std::uint64_t refused = 0; // requests answered 429 while their source was limited
    };

    AuthLimiter() = default;
    explicit AuthLimiter(Options options);

    // The time left of `source`'s limit (and counted as refused), or nothing when it may try.
    std::optional<Clock::duration> limited(const std::string& source, Clock::time_point now);
    // What the limit counts as one source, from a peer's address: an IPv4 address (also one
    // mapped into IPv6, or NAT64's 64:ff9b::/96), else the address's IPv6 /64 (one host's
    // share of a network: its interface ids are free to change); text it cannot read as an
    // address stays itself.
    static std::string source_of(std::string_view address);
    // A failed attempt from `source`: true when it began a limit (logged once, by the caller).
    bool failed(const std::string& source, Clock::time_point now);
    Totals totals() const;
    const Options& options() const { return options_; }

private:
    struct Source {
        std::vector<Clock::time_point> failures; // within the window, fewer than `failures`
        std::optional<Clock::time_point> until;
    };
    void make_room(Clock::time_point now); // with mutex_ held

    Options options_;
    mutable std::mutex mutex_; // a hand-off (IoPath): held for one lookup, the upgrade path does no more under it
    std::unordered_map<std::string, Source> sources_;
    Totals totals_;
    Clock::time_point swept_ {};
};

} // namespace fulcrum::access
