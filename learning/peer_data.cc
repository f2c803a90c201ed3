#include "learning/peer_data.h"

#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "learning/idx_rows.h"

namespace fastk::learning {
namespace {

// The test pair of an IDX data set and the standardisation of its training set (none unless
// data.normalization asks for one).
struct IdxTest {
  IdxPair pair;
  std::optional<Standardization> standardization;
};

IdxTest read_idx_test(const DataSpec& spec, const std::vector<std::string>& files,
                      std::optional<Standardization> standardization) {
  return {read_idx_limited(files[2], files[3], spec.test_limit), standardization};
}

// A pending test set is held for the whole run and first read at its end: its bytes are
// copied out of a mapping, so that a cache entry replaced meanwhile on a shared (NFS) home
// cannot fault under the peer (SIGBUS), and an I/O error shows at the start as a DataError.
IdxTest owned(IdxTest test) {
  if (!test.pair.bytes.mapped()) return test;
  const auto offset = std::size_t(test.pair.pixels.data() - test.pair.bytes.data());
  const std::size_t size = test.pair.pixels.size();
  test.pair.bytes = ByteBuffer(test.pair.bytes.to_vector());
  test.pair.pixels = test.pair.bytes.bytes().subspan(offset, size);
  return test;
}

Dataset all_rows(const IdxTest& test, const DataSpec& spec) {
  std::vector<std::int64_t> all(test.pair.labels.size());
  std::iota(all.begin(), all.end(), 0);
  return idx_rows(test.pair, all, test.standardization, to_string(spec.kind) + "-test");
}

}  // namespace

struct TestSet::Pending {
  IdxTest test;
  DataSpec spec;
};

TestSet::TestSet(Dataset ready) : data_(std::move(ready)) {}
TestSet::TestSet(std::unique_ptr<Pending> pending) : pending_(std::move(pending)) {}
TestSet::TestSet(TestSet&&) noexcept = default;
TestSet& TestSet::operator=(TestSet&&) noexcept = default;
TestSet::~TestSet() = default;

const Dataset& TestSet::get() {
  if (pending_) {
    data_ = all_rows(pending_->test, pending_->spec);
    pending_.reset();  // the bytes (a mapping) are not needed any more
  }
  return data_;
}

PeerData load_peer_data(const DataSpec& spec, const RowSelector& select) {
  if (!is_idx(spec.kind)) {  // generated or CIFAR-10: load whole, then keep the rows
    TrainTest data = load_data(spec);
    const std::vector<std::int64_t> rows =
        select(data.train.labels, data.train.classes, data.train.size());
    return {select_rows(data.train, rows), TestSet(std::move(data.test))};
  }
  const std::vector<std::string> files = data_files(spec);
  const IdxPair train = read_idx_limited(files[0], files[1], spec.train_limit);
  const std::vector<std::int64_t> rows =
      select(train.labels, train.classes, std::int64_t(train.labels.size()));
  const std::optional<Standardization> standardization = idx_standardization(spec, train);
  Dataset mine = idx_rows(train, rows, standardization, to_string(spec.kind) + "-train");
  auto pending = std::make_unique<TestSet::Pending>(
      TestSet::Pending{owned(read_idx_test(spec, files, standardization)), spec});
  return {std::move(mine), TestSet(std::move(pending))};
}

Dataset load_test_set(const DataSpec& spec) {
  if (!is_idx(spec.kind)) return load_data(spec).test;
  const std::vector<std::string> files = data_files(spec);
  std::optional<Standardization> standardization;  // from the training pixels, if asked for
  if (standardizes(spec.normalization)) {
    standardization =
        idx_standardization(spec, read_idx_limited(files[0], files[1], spec.train_limit));
  }
  return all_rows(read_idx_test(spec, files, standardization), spec);
}

}  // namespace fastk::learning
