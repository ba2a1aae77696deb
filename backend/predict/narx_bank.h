#pragma once

#include "predict/narx_network.h"

#include <cstddef>
#include <vector>

namespace fulcrum::predict {

// The NARX networks of all workers of a job, evaluated together at a barrier. Each worker
// keeps its own network (LB-BSP Sec. 4.1: one model per worker), but a decision for a
// thousand workers cannot afford a thousand scattered small inferences: here the weights
// and inputs of eight workers are interleaved lane by lane (an array of structures of
// arrays), so one SIMD instruction advances eight networks and memory streams in order.
class NarxBank {
public:
    explicit NarxBank(NarxShape shape = {});

    const NarxShape& shape() const { return shape_; }
    std::size_t slots() const { return slots_; }
    void resize(std::size_t slots);

    // Copies a worker's network in (after every training or warm start). Throws
    // std::invalid_argument when its shape differs from the bank's.
    void set_network(std::size_t slot, const NarxNetwork& network);
    // One worker's normalised input window, shape().inputs() values in NarxNetwork order.
    void set_input(std::size_t slot, const float* input);
    // Where a slot's first input lives; the next input is input_stride() floats further on.
    // For writing a window in place (NarxPredictor::input_window with this stride).
    float* input_lanes(std::size_t slot);
    static constexpr std::size_t input_stride() { return kLanes; }

    // The network output for every slot; slots without a network or input give 0.
    const std::vector<float>& infer();

private:
    static constexpr std::size_t kLanes = 8;
    std::size_t groups() const { return (slots_ + kLanes - 1) / kLanes; }

    NarxShape shape_;
    std::size_t params_ = 0; // per network: b1 (H), W1 (H x I, row by row), w2 (H), b2
    std::size_t slots_ = 0;
    std::vector<float> weights_; // [group][param][lane]
    std::vector<float> inputs_; // [group][input][lane]
    std::vector<float> outputs_;
};

} // namespace fulcrum::predict
