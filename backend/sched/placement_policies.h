#pragma once

#include "common/random.h"
#include "sched/placement.h"

namespace fulcrum::sched {

class RandomPlacement final : public PlacementPolicy {
public:
    explicit RandomPlacement(std::uint64_t seed);
    std::string name() const override { return "rand"; }
    std::vector<int> place(const JobSpec& job, const ClusterSpec& cluster, const std::vector<GpuState>& gpus) override;

private:
    Rng rng_;
};

class FirstFitPlacement final : public PlacementPolicy {
public:
    std::string name() const override { return "ff"; }
    std::vector<int> place(const JobSpec& job, const ClusterSpec& cluster, const std::vector<GpuState>& gpus) override;
};

class ListSchedulingPlacement final : public PlacementPolicy {
public:
    std::string name() const override { return "ls"; }
    std::vector<int> place(const JobSpec& job, const ClusterSpec& cluster, const std::vector<GpuState>& gpus) override;
};

class LwfPlacement final : public PlacementPolicy {
public:
    explicit LwfPlacement(int kappa);
    std::string name() const override { return "lwf-" + std::to_string(kappa_); }
    std::vector<int> place(const JobSpec& job, const ClusterSpec& cluster, const std::vector<GpuState>& gpus) override;

private:
    int kappa_;
};

} // namespace fulcrum::sched
