// How a peer picks its CPUs ([cluster] bind_cpus): blocks in peer order.
#include "node/os/cpu_binding.h"

#include <gtest/gtest.h>

#include <vector>

#include "node/config/cluster.h"

namespace fastk::node::os {
namespace {

using Cpus = std::vector<int>;

std::vector<Cpus> shares(const Cpus& allowed, int peers) {
  std::vector<Cpus> out;
  for (int j = 0; j < peers; ++j) out.push_back(cpu_share(allowed, j, peers));
  return out;
}

TEST(CpuShare, MorePeersThanCpusShareCpusInBlocksSoRingNeighboursMostlyShareOne) {
  EXPECT_EQ(shares({0, 1}, 8), (std::vector<Cpus>{{0}, {0}, {0}, {0}, {1}, {1}, {1}, {1}}));
  // Not a multiple: the peer whose block straddles two CPUs gets both.
  EXPECT_EQ(shares({0, 1}, 3), (std::vector<Cpus>{{0}, {0, 1}, {1}}));
  EXPECT_EQ(shares({0, 1}, 1), (std::vector<Cpus>{{0, 1}}));
}

TEST(CpuShare, FewerPeersThanCpusGetABlockEach) {
  EXPECT_EQ(shares({0, 1, 2, 3, 4, 5, 6, 7}, 2), (std::vector<Cpus>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(shares({0, 1, 2, 3, 4}, 2), (std::vector<Cpus>{{0, 1, 2}, {2, 3, 4}}));
}

TEST(CpuShare, OnlyTheCpusTheProcessMayUse) {
  // A process already confined (taskset, mpirun, a cgroup) splits what it was given.
  EXPECT_EQ(shares({2, 5, 7}, 3), (std::vector<Cpus>{{2}, {5}, {7}}));
  EXPECT_EQ(cpu_share(Cpus{}, 0, 1), Cpus{});
  EXPECT_EQ(cpu_share(Cpus{0, 1}, 2, 2), Cpus{});
  EXPECT_EQ(cpu_share(Cpus{0, 1}, -1, 2), Cpus{});
  EXPECT_EQ(cpu_share(Cpus{0, 1}, 0, 0), Cpus{});
}

TEST(CpuShare, DescribedAsRanges) {
  EXPECT_EQ(describe_cpus(Cpus{0, 1, 2, 3}), "0-3");
  EXPECT_EQ(describe_cpus(Cpus{1}), "1");
  EXPECT_EQ(describe_cpus(Cpus{0, 2, 3, 5}), "0,2-3,5");
  EXPECT_EQ(describe_cpus(Cpus{}), "");
}

TEST(HostShare, PeersOnOneHostInPeerOrder) {
  ClusterConfig local;  // every peer on this machine
  EXPECT_EQ(host_share(local, 8, 5).local_index, 5);
  EXPECT_EQ(host_share(local, 8, 5).local_count, 8);
  ClusterConfig three;
  three.hosts = {"10.0.0.1", "10.0.0.2", "node3.lan"};  // blocks of 3, 3, 2
  EXPECT_EQ(host_share(three, 8, 4).local_index, 1);
  EXPECT_EQ(host_share(three, 8, 4).local_count, 3);
  EXPECT_EQ(host_share(three, 8, 7).local_index, 1);
  EXPECT_EQ(host_share(three, 8, 7).local_count, 2);
  ClusterConfig endpoints;
  endpoints.endpoints = {"tcp://a:5000", "tcp://b:5000", "tcp://a:5001", "tcp://a:5002"};
  EXPECT_EQ(host_share(endpoints, 4, 2).local_index, 1);
  EXPECT_EQ(host_share(endpoints, 4, 2).local_count, 3);
  EXPECT_EQ(host_share(endpoints, 4, 1).local_count, 1);
  // One machine, two spellings.
  endpoints.endpoints = {"tcp://localhost:5000", "tcp://127.0.0.1:5001"};
  EXPECT_EQ(host_share(endpoints, 2, 1).local_index, 1);
  EXPECT_EQ(host_share(endpoints, 2, 1).local_count, 2);
  // A peer count of 0 (an edge list without `peers`, before the graph is read) or a peer
  // out of range is no division by zero: the peer is alone.
  EXPECT_EQ(host_share(local, 0, 0).local_count, 1);
  EXPECT_EQ(host_share(three, 8, 9).local_count, 1);
}

}  // namespace
}  // namespace fastk::node::os
