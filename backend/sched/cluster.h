#pragma once

#include "sched/tenant_quota.h"

#include <string>

namespace fulcrum::sched {

// Communication cost of one all-reduce of M bytes across servers (Wang et al., eq. 5):
// alone T = a + b·M; with k tasks sharing a server's link T = a + k·b·M + (k−1)·η·M. The
// η term is what contention costs beyond plain bandwidth sharing.
struct ContentionModel {
    double a = 6.69e-4; // s, start-up latency
    double b = 8.53e-10; // s per byte: 10 Gbps Ethernet as measured in the paper
    // s per byte of penalty per extra concurrent task: the authors' simulator's 0.235 ms/MB
    // (HKBU-HPML/dl-scheduling, online/cluster.py).
    double eta = 2.35e-10;

    double time(double bytes, int k) const { return a + seconds_per_byte(k) * bytes; }
    // The transfer part of eq. 5 per byte at contention level k >= 1.
    double seconds_per_byte(int k) const { return k * b + (k - 1) * eta; }
    // How much longer one of k contending transfers of `bytes` takes than one alone: T(k) / T(1).
    double stretch(double bytes, int k) const { return time(bytes, k) / time(bytes, 1); }
};

// Servers of identical GPUs behind one switch; each server's network link is shared by the
// all-reduces of the jobs that span it.
struct ClusterSpec {
    int servers = 16;
    int gpus_per_server = 4;
    double gpu_memory_gb = 16; // V100 16 GB
    ContentionModel network;
    // All-reduce among GPUs of one server goes over PCIe/NVLink, not the network: no
    // contention with other jobs' network traffic (~10 GB/s).
    double intra_server_b = 1.0e-10;
    // What LS and LWF count as a GPU's workload: compute time only (0, the default), or also
    // this many seconds per byte of every all-reduce still to come for a job that spans
    // servers. The authors' simulator counts 7.8125e-9 (1 Gbps) there.
    double placement_comm_b = 0;
    // Whether a worker with neither a GPU profile nor a CUDA device takes a GPU all the same.
    // The papers' workloads model every worker on a GPU, so the simulator and a cluster file
    // do; fulcrumd's own default cluster does not: there a CPU worker runs beside the GPUs,
    // bounded by the daemon's memory and thread budget (issue 44 item 6).
    bool cpu_workers_take_gpus = true;

    // Tenants' quotas of these GPUs, borrowing and weights (issue 47); none: no quotas.
    TenantQuotas tenants;

    int gpus() const { return servers * gpus_per_server; }
    int server_of(int gpu) const { return gpu / gpus_per_server; }
};

// The cluster from a JSON file: {"servers", "gpus_per_server", "gpu_memory_gb",
// "intra_server_b", "placement_comm_b", "cpu_workers_take_gpus", "network": {"a", "b", "eta"},
// "tenants": {"T": {"gpus", "borrow", "weight"}}, "rigid_borrowers": "wait"|"requeue"},
// every field optional. Throws InputError naming the file and field.
ClusterSpec load_cluster(const std::string& path);

} // namespace fulcrum::sched
