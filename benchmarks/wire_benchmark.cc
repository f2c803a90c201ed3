// Throughput of the networking layer for an MLP 784-128-10 model (101,770 floats, 407 KB):
// the CRC-32C checksum (and the alternatives), encoding and decoding a MODEL, and MODEL messages
// through two real ZeroMQ transports over tcp://127.0.0.1.
//
//   cmake -B build-bench -DFASTK_BUILD_BENCHMARKS=ON && cmake --build build-bench
//   build-bench/benchmarks/wire_benchmark
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <chrono>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "node/transport/zmq_transport.h"
#include "node/wire/checksum.h"
#include "node/wire/decoder.h"
#include "node/wire/encoder.h"

namespace {

using namespace fastk::node;
using namespace std::chrono_literals;

constexpr std::size_t kMlpParameters = 101770;
const wire::HelloInfo kRun{1, 2};

std::shared_ptr<std::vector<float>> parameters(std::size_t n) {
  auto v = std::make_shared<std::vector<float>>(n);
  std::iota(v->begin(), v->end(), 0.25f);
  return v;
}

void BM_Crc32(benchmark::State& state) {
  const std::vector<std::byte> bytes(static_cast<std::size_t>(state.range(0)), std::byte{7});
  for (auto _ : state) benchmark::DoNotOptimize(wire::crc32c_extend(0, bytes));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc32)->Arg(4 << 10)->Arg(kMlpParameters * sizeof(float));

// The alternatives: the portable table version of CRC-32C, and zlib's CRC-32.
void BM_Crc32Portable(benchmark::State& state) {
  const std::vector<std::byte> bytes(kMlpParameters * sizeof(float), std::byte{7});
  for (auto _ : state) benchmark::DoNotOptimize(wire::crc32c_extend_portable(0, bytes));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK(BM_Crc32Portable);

void BM_Crc32Zlib(benchmark::State& state) {
  const std::vector<Bytef> bytes(kMlpParameters * sizeof(float), 7);
  for (auto _ : state) benchmark::DoNotOptimize(crc32_z(0, bytes.data(), bytes.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK(BM_Crc32Zlib);

void BM_EncodeModel(benchmark::State& state) {
  auto params = parameters(kMlpParameters);
  for (auto _ : state) benchmark::DoNotOptimize(wire::encode_model(0, 7, params, *params));
  state.SetBytesProcessed(state.iterations() * kMlpParameters * sizeof(float));
}
BENCHMARK(BM_EncodeModel);

void BM_DecodeModel(benchmark::State& state) {
  auto params = parameters(kMlpParameters);
  const wire::EncodedMessage m = wire::encode_model(0, 7, params, *params);
  const std::span<const std::byte> frames[] = {m.header, m.payload.bytes};
  const wire::PeerId senders[] = {0};
  const wire::WirePeers peers(1, kRun, senders);
  for (auto _ : state) {
    wire::DecodeResult r = wire::decode(frames, peers);
    if (!std::holds_alternative<wire::DecodedMessage>(r)) state.SkipWithError("rejected");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * kMlpParameters * sizeof(float));
}
BENCHMARK(BM_DecodeModel);

// Peer 0 sends MODELs to peer 1 over loopback TCP, keeping `window` messages in flight;
// each iteration is one message sent, received, decoded and checksummed.
void BM_LoopbackModel(benchmark::State& state) {
  const int window = static_cast<int>(state.range(0));
  const wire::PeerId from_0[] = {0};
  const wire::PeerId from_1[] = {1};
  transport::ZmqTransport receiver(wire::WirePeers(1, kRun, from_0), "tcp://127.0.0.1:*");
  transport::ZmqTransport sender(wire::WirePeers(0, kRun, from_1), "tcp://127.0.0.1:*");
  sender.connect(1, receiver.endpoint());
  auto params = parameters(kMlpParameters);
  const wire::EncodedMessage model = wire::encode_model(0, 1, params, *params);

  auto receive_one = [&] {
    while (true) {
      auto got = receiver.receive(1000ms);
      if (!got) throw std::runtime_error("loopback MODEL did not arrive within 1 s");
      if (std::holds_alternative<transport::ReceivedMessage>(*got)) return;
    }
  };
  int in_flight = 0;
  for (auto _ : state) {
    while (in_flight < window) {
      if (sender.send(1, model) != transport::SendStatus::kQueued) {
        state.SkipWithError("send dropped");
        return;
      }
      ++in_flight;
    }
    receive_one();
    --in_flight;
  }
  while (in_flight-- > 0) receive_one();
  state.SetBytesProcessed(state.iterations() * kMlpParameters * sizeof(float));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LoopbackModel)->Arg(1)->Arg(8)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
