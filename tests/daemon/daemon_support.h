#pragma once

// Reading a client's queue in tests that drive fulcrumd's Daemon without a socket.

#include "daemon/daemon.h"
#include "protocol/codec.h"
#include "serve/stream_hub.h"

#include <algorithm>
#include <chrono>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fulcrum::testing_support {

using namespace fulcrum::protocol;

inline std::vector<ServerMessage> drain(serve::Client& client)
{
    std::vector<ServerMessage> out;
    while (auto frame = client.queue().pop()) {
        const auto decoded = decode_server(**frame);
        EXPECT_TRUE(decoded) << **frame;
        if (decoded)
            out.push_back(*decoded.message);
    }
    return out;
}

// The cluster GPUs fulcrumd's book holds for `job` (its workers' and its servers').
inline long gpus_in_book(const daemon::Daemon& d, JobId job)
{
    const ClusterState c = d.cluster();
    return std::count_if(c.gpus.begin(), c.gpus.end(),
        [&](const GpuUsage& g) { return std::find(g.jobs.begin(), g.jobs.end(), job) != g.jobs.end(); });
}

inline std::optional<Reply> reply_to(const std::vector<ServerMessage>& messages, const std::string& id)
{
    for (const auto& m : messages)
        if (const auto* r = std::get_if<Reply>(&m); r && r->id == id)
            return *r;
    return std::nullopt;
}

// Drains the client until a message `accept` takes (true), or 60 s pass (false). Every
// message drained is appended to `seen`.
template <class Accept> bool wait_for(serve::Client& client, std::vector<ServerMessage>& seen, Accept accept)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    // One frame at a time: what comes after the accepted message stays queued for the next
    // wait, instead of being read here and never looked at.
    while (std::chrono::steady_clock::now() < deadline) {
        bool read = false;
        while (auto frame = client.queue().pop()) {
            read = true;
            const auto decoded = decode_server(**frame);
            EXPECT_TRUE(decoded) << **frame;
            if (!decoded)
                continue;
            seen.push_back(*decoded.message);
            if (accept(seen.back()))
                return true;
        }
        if (!read)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

// As wait_for, also accepting a message drained already: a job's status is coalesced in
// the client's queue, so the status after a command may come before the command's reply.
template <class Accept> bool seen_or_wait_for(serve::Client& client, std::vector<ServerMessage>& seen, Accept accept)
{
    return std::any_of(seen.begin(), seen.end(), accept) || wait_for(client, seen, accept);
}

// Sends `frame` (a request) from `client` and waits for its reply; an empty Reply (after a
// failed expectation) if none comes within 60 s.
inline Reply request_reply(
    daemon::Daemon& d, serve::Client& client, std::vector<ServerMessage>& seen, const std::string& frame)
{
    d.receive(client, frame);
    const std::string id = decode_client(frame).request_id;
    std::optional<Reply> reply;
    EXPECT_TRUE(wait_for(client, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<Reply>(&m);
        if (r && r->id == id)
            reply = *r;
        return reply.has_value();
    })) << frame;
    return reply.value_or(Reply {});
}

} // namespace fulcrum::testing_support
