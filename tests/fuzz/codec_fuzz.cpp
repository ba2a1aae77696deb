// libFuzzer target for the protocol codec (scripts/fuzz.sh builds it with clang and runs it
// for a bounded time; codec_corpus_test replays the seed corpus in every build). Properties:
// decoding any bytes returns instead of crashing, and whatever decodes re-encodes into a
// frame that decodes again. The remote workers' binary frames go through the same test.

#include "protocol/codec.h"
#include "protocol/worker_frames.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace fulcrum::protocol;
    const std::string_view frame(reinterpret_cast<const char*>(data), size);
    if (const auto client = decode_client(frame); client && !decode_client(encode(*client.message)))
        std::abort();
    if (const auto server = decode_server(frame); server && !decode_server(encode(*server.message)))
        std::abort();
    if (const auto task = decode_task(frame, nullptr);
        task && encode_task(task->iteration, task->batch_size, task->parameters) != frame)
        std::abort();
    if (const auto result = decode_result(frame, nullptr); result && encode_result(*result) != frame)
        std::abort();
    return 0;
}
