// How long the protocol codec takes for the two frames a large job streams at every
// iteration: a `workers` update of N worker states and an `iterations` frame of N rows.
// A console, fulcrumctl and fulcrum-worker decode them (decode_server, with every field
// checked); fulcrumd encodes them. Prints the median microseconds per frame and, as the
// baseline measured in the same run, a plain Boost.JSON parse of the same text (no fields
// read, nothing checked): decode's ratio to it is what the checking costs.
//
//   build/release/bench/codec_frames [--workers N] [--repeats N]

#include "protocol/codec.h"

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace fulcrum;
using namespace fulcrum::protocol;
using Clock = std::chrono::steady_clock;

namespace {

ServerMessage worker_update(int n)
{
    WorkerUpdate update;
    update.job = 7;
    for (int w = 0; w < n; ++w) {
        WorkerState s;
        s.worker = w;
        s.name = "worker-" + std::to_string(w);
        s.batch_size = 100 + w % 37;
        if (w % 10 == 0)
            s.pinned = 64;
        s.excluded = w % 50 == 1;
        s.slowdown = w % 25 == 3 ? 2.5 : 1.0;
        s.device = w % 2 == 0 ? "cpu" : "cuda:0";
        if (w % 100 == 7) {
            s.stalled_since = 12.25;
            s.predicted_s = 0.75;
        }
        update.workers.push_back(s);
    }
    return update;
}

ServerMessage iteration_rows(int n)
{
    IterationRows frame;
    frame.job = 7;
    frame.iteration = 1234;
    for (int w = 0; w < n; ++w) {
        IterationRecord r;
        r.job = 7;
        r.worker = w;
        r.iteration = 1234;
        r.start_s = 123.456789 + w * 1e-3;
        r.end_s = r.start_s + 0.0123456 * (1 + w % 7);
        r.batch_size = 100 + w % 37;
        r.compute_s = 0.0101 * (1 + w % 7);
        r.comm_s = 0.0021;
        r.wait_s = 0.0003 * (w % 11);
        r.cpu_share = 0.5 + 0.001 * (w % 500);
        r.memory_share = 0.75;
        r.speed = r.batch_size / r.compute_s;
        r.predicted_speed = r.speed * 1.01;
        r.loss = 0.6931 - 0.0001 * w;
        r.decision = "balanced";
        frame.rows.push_back(r);
    }
    return frame;
}

template <class Work> double median_us(int repeats, Work&& work)
{
    std::vector<double> us;
    for (int k = 0; k < repeats; ++k) {
        const auto start = Clock::now();
        work();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    std::nth_element(us.begin(), us.begin() + static_cast<long>(us.size() / 2), us.end());
    return us[us.size() / 2];
}

void measure(const char* what, const ServerMessage& message, int n, int repeats)
{
    const std::string frame = encode(message);
    std::size_t sink = 0;
    const double encode_us = median_us(repeats, [&] { sink += encode(message).size(); });
    const double parse_us = median_us(repeats, [&] { sink += boost::json::parse(frame).as_object().size(); });
    const double decode_us = median_us(repeats, [&] {
        const Decoded<ServerMessage> decoded = decode_server(frame);
        if (!decoded) {
            std::fprintf(stderr, "codec_frames: the %s does not decode: %s\n", what, decoded.error.message.c_str());
            std::exit(1);
        }
        sink += decoded.message->index();
    });
    std::printf("%s, %d entries, %zu bytes: encode %.1f us, decode %.1f us (%.2f us an entry), plain parse %.1f us; "
                "decode / plain parse x%.2f\n",
        what, n, frame.size(), encode_us, decode_us, decode_us / n, parse_us, decode_us / parse_us);
    if (sink == 0) // keeps the timed work from being optimised away
        std::printf("(nothing decoded)\n");
}

} // namespace

int main(int argc, char** argv)
{
    int workers = 500;
    int repeats = 400;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = std::max(1, std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: codec_frames [--workers N] [--repeats N]\n");
            return 2;
        }
    }
    measure("workers update", worker_update(workers), workers, repeats);
    measure("iterations frame", iteration_rows(workers), workers, repeats);
    return 0;
}
