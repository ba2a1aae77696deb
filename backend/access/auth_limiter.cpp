#include "access/auth_limiter.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>

namespace fulcrum::access {

AuthLimiter::AuthLimiter(Options options)
    : options_(options)
{
}

std::string AuthLimiter::source_of(std::string_view address)
{
    namespace ip = boost::asio::ip;
    boost::system::error_code ec;
    const ip::address a = ip::make_address(std::string(address), ec);
    if (ec)
        return std::string(address);
    if (a.is_v4())
        return a.to_string();
    const ip::address_v6 v6 = a.to_v6();
    if (v6.is_v4_mapped())
        return ip::make_address_v4(ip::v4_mapped, v6).to_string();
    ip::address_v6::bytes_type bytes = v6.to_bytes();
    static constexpr std::array<unsigned char, 12> kNat64 { 0x00, 0x64, 0xff, 0x9b }; // 64:ff9b::/96
    if (std::equal(kNat64.begin(), kNat64.end(), bytes.begin()))
        return ip::address_v4({ bytes[12], bytes[13], bytes[14], bytes[15] }).to_string();
    std::fill(bytes.begin() + 8, bytes.end(), 0);
    return ip::address_v6(bytes).to_string() + "/64";
}

std::optional<AuthLimiter::Clock::duration> AuthLimiter::limited(const std::string& source, Clock::time_point now)
{
    std::lock_guard lock(mutex_);
    const auto it = sources_.find(source);
    if (it == sources_.end() || !it->second.until)
        return std::nullopt;
    if (now >= *it->second.until) { // served its time: starts afresh
        sources_.erase(it);
        return std::nullopt;
    }
    ++totals_.refused;
    return *it->second.until - now;
}

bool AuthLimiter::failed(const std::string& source, Clock::time_point now)
{
    std::lock_guard lock(mutex_);
    ++totals_.failures;
    if (options_.failures <= 0)
        return false;
    auto it = sources_.find(source);
    if (it == sources_.end()) {
        if (sources_.size() >= options_.sources && now - swept_ >= std::chrono::seconds(1)) {
            swept_ = now; // a sweep at most once a second: a full table costs no scan per attempt
            make_room(now);
        }
        if (sources_.size() >= options_.sources)
            sources_.erase(sources_.begin()); // every one kept is recent: one goes, so no new source goes free
        it = sources_.emplace(source, Source {}).first;
    }
    Source& s = it->second;
    if (s.until)
        return false;
    std::erase_if(s.failures, [&](Clock::time_point t) { return now - t >= options_.window; });
    s.failures.push_back(now);
    if (static_cast<int>(s.failures.size()) < options_.failures)
        return false;
    s.failures.clear();
    s.until = now + options_.window;
    ++totals_.limits;
    return true;
}

AuthLimiter::Totals AuthLimiter::totals() const
{
    std::lock_guard lock(mutex_);
    return totals_;
}

void AuthLimiter::make_room(Clock::time_point now)
{
    std::erase_if(sources_, [&](const auto& entry) {
        const Source& s = entry.second;
        if (s.until)
            return now >= *s.until;
        return s.failures.empty() || now - s.failures.back() >= options_.window;
    });
}

} // namespace fulcrum::access
