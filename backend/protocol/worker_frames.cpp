#include "protocol/worker_frames.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace fulcrum::protocol {

static_assert(
    std::endian::native == std::endian::little, "worker frames carry little-endian values as they are in memory");

namespace {

constexpr std::string_view kTaskMagic = "FTSK";
constexpr std::string_view kResultMagic = "FRES";
constexpr std::string_view kGpuMagic = "FGPU";
constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

class Writer {
public:
    Writer(std::string_view magic, std::size_t payload)
    {
        out_.reserve(magic.size() + payload);
        out_.append(magic);
    }
    void magic(std::string_view m) { out_.append(m); }
    template <class T> void put(T value) { out_.append(reinterpret_cast<const char*>(&value), sizeof value); }
    void floats(std::span<const float> values)
    {
        put(static_cast<std::uint64_t>(values.size()));
        if (!values.empty())
            out_.append(reinterpret_cast<const char*>(values.data()), values.size_bytes());
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

class Reader {
public:
    Reader(std::string_view frame, std::string_view magic)
        : frame_(frame)
        , ok_(frame.substr(0, magic.size()) == magic)
        , at_(magic.size())
    {
    }
    template <class T> T get()
    {
        T value {};
        if (!ok_ || frame_.size() - at_ < sizeof value) {
            ok_ = false;
            return value;
        }
        std::memcpy(&value, frame_.data() + at_, sizeof value);
        at_ += sizeof value;
        return value;
    }
    std::vector<float> floats()
    {
        const auto count = get<std::uint64_t>();
        if (!ok_ || count > (frame_.size() - at_) / sizeof(float)) {
            ok_ = false;
            return {};
        }
        std::vector<float> values(static_cast<std::size_t>(count));
        if (!values.empty()) // an empty vector's data() may be null, which memcpy must not get
            std::memcpy(values.data(), frame_.data() + at_, values.size() * sizeof(float));
        at_ += values.size() * sizeof(float);
        return values;
    }
    bool whole() const { return ok_ && at_ == frame_.size(); }
    // Reads `magic` if the frame goes on with it.
    bool next_is(std::string_view magic)
    {
        if (!ok_ || frame_.substr(at_, magic.size()) != magic)
            return false;
        at_ += magic.size();
        return true;
    }

private:
    std::string_view frame_;
    bool ok_;
    std::size_t at_;
};

} // namespace

std::string encode_task(std::int64_t iteration, std::int32_t batch_size, std::span<const float> parameters)
{
    Writer w(kTaskMagic, 24 + parameters.size_bytes());
    w.put(iteration);
    w.put(batch_size);
    w.floats(parameters);
    return w.take();
}

std::string encode_result(const WorkerResult& r)
{
    Writer w(kResultMagic, 56 + r.gradient.size() * sizeof(float));
    w.put(r.iteration);
    w.put(r.batch_size);
    w.put(r.loss);
    w.put(r.compute_s);
    w.put(r.cpu_share);
    w.put(r.memory_share);
    w.floats(r.gradient);
    if (r.gpu != GpuUse {}) {
        w.magic(kGpuMagic);
        for (const std::optional<double>& v : { r.gpu.memory_gb, r.gpu.memory_share, r.gpu.utilization })
            w.put(v.value_or(kNotMeasured));
    }
    return w.take();
}

std::optional<WorkerTask> decode_task(std::string_view frame, std::string* error)
{
    Reader r(frame, kTaskMagic);
    WorkerTask t;
    t.iteration = r.get<std::int64_t>();
    t.batch_size = r.get<std::int32_t>();
    t.parameters = r.floats();
    if (!r.whole()) {
        if (error)
            *error = "not a whole task frame (" + std::to_string(frame.size()) + " bytes)";
        return std::nullopt;
    }
    return t;
}

std::optional<WorkerResult> decode_result(std::string_view frame, std::string* error)
{
    Reader r(frame, kResultMagic);
    WorkerResult out;
    out.iteration = r.get<std::int64_t>();
    out.batch_size = r.get<std::int32_t>();
    out.loss = r.get<double>();
    out.compute_s = r.get<double>();
    out.cpu_share = r.get<double>();
    out.memory_share = r.get<double>();
    out.gradient = r.floats();
    // A GPU block holds at least one reading; each is finite and >= 0, or the one NaN that
    // encode writes for "not measured" (so that a frame decodes only to what re-encodes it).
    bool gpu_block_valid = true;
    if (r.next_is(kGpuMagic)) {
        for (std::optional<double>* v : { &out.gpu.memory_gb, &out.gpu.memory_share, &out.gpu.utilization }) {
            const auto value = r.get<double>();
            if (std::bit_cast<std::uint64_t>(value) == std::bit_cast<std::uint64_t>(kNotMeasured))
                continue;
            if (!std::isfinite(value) || value < 0)
                gpu_block_valid = false;
            *v = value;
        }
        gpu_block_valid = gpu_block_valid && out.gpu != GpuUse {};
    }
    if (!r.whole() || !gpu_block_valid) {
        if (error)
            *error = !r.whole() ? "not a whole result frame (" + std::to_string(frame.size()) + " bytes)"
                                : std::string("a result frame's GPU block holds no reading, or one that is negative or "
                                              "not finite");
        return std::nullopt;
    }
    return out;
}

bool is_worker_frame(std::string_view frame)
{
    return frame.substr(0, 4) == kTaskMagic || frame.substr(0, 4) == kResultMagic;
}

} // namespace fulcrum::protocol
