#include "predict/narx_bank.h"

#include "common/eigen_core.h"

#include <stdexcept>

namespace fulcrum::predict {

namespace {
using Lanes = Eigen::Array<float, 8, 1>; // eight workers, one AVX register
}

NarxBank::NarxBank(NarxShape shape)
    : shape_(shape)
    , params_(static_cast<std::size_t>(shape.hidden) * static_cast<std::size_t>(shape.inputs() + 2) + 1)
{
}

void NarxBank::resize(std::size_t slots)
{
    slots_ = slots;
    weights_.resize(groups() * params_ * kLanes, 0.0f);
    inputs_.resize(groups() * static_cast<std::size_t>(shape_.inputs()) * kLanes, 0.0f);
    outputs_.resize(groups() * kLanes, 0.0f);
}

void NarxBank::set_network(std::size_t slot, const NarxNetwork& network)
{
    if (!(network.shape() == shape_))
        throw std::invalid_argument("NARX network shape differs from the bank's");
    if (slot >= slots_)
        resize(slot + 1);
    const auto hidden = static_cast<Eigen::Index>(shape_.hidden);
    const auto inputs = static_cast<Eigen::Index>(shape_.inputs());
    float* base = weights_.data() + (slot / kLanes) * params_ * kLanes + slot % kLanes;
    std::size_t p = 0;
    const auto put = [&](double value) { base[(p++) * kLanes] = static_cast<float>(value); };
    for (Eigen::Index h = 0; h < hidden; ++h)
        put(network.hidden_bias()(h));
    for (Eigen::Index h = 0; h < hidden; ++h)
        for (Eigen::Index j = 0; j < inputs; ++j)
            put(network.input_weights()(h, j));
    for (Eigen::Index h = 0; h < hidden; ++h)
        put(network.output_weights()(h));
    put(network.output_bias());
}

float* NarxBank::input_lanes(std::size_t slot)
{
    if (slot >= slots_)
        resize(slot + 1);
    return inputs_.data() + (slot / kLanes) * static_cast<std::size_t>(shape_.inputs()) * kLanes + slot % kLanes;
}

void NarxBank::set_input(std::size_t slot, const float* input)
{
    float* base = input_lanes(slot);
    for (std::size_t j = 0; j < static_cast<std::size_t>(shape_.inputs()); ++j)
        base[j * kLanes] = input[j];
}

const std::vector<float>& NarxBank::infer()
{
    const auto hidden = static_cast<std::size_t>(shape_.hidden);
    const auto inputs = static_cast<std::size_t>(shape_.inputs());
    for (std::size_t g = 0; g < groups(); ++g) {
        const float* w = weights_.data() + g * params_ * kLanes;
        const float* x = inputs_.data() + g * inputs * kLanes;
        const float* w1 = w + hidden * kLanes;
        const float* w2 = w1 + hidden * inputs * kLanes;
        Lanes out = Eigen::Map<const Lanes>(w2 + hidden * kLanes);
        for (std::size_t h = 0; h < hidden; ++h) {
            Lanes pre = Eigen::Map<const Lanes>(w + h * kLanes);
            const float* row = w1 + h * inputs * kLanes;
            for (std::size_t j = 0; j < inputs; ++j)
                pre += Eigen::Map<const Lanes>(row + j * kLanes) * Eigen::Map<const Lanes>(x + j * kLanes);
            out += Eigen::Map<const Lanes>(w2 + h * kLanes) * pre.tanh();
        }
        Eigen::Map<Lanes>(outputs_.data() + g * kLanes) = out;
    }
    return outputs_;
}

} // namespace fulcrum::predict
