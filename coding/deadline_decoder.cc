#include "coding/deadline_decoder.h"

#include <vector>

#include "coding/subsets.h"

namespace fastk::coding {

Decoding decode_at_deadline(const FractionalRepetitionCode& code, std::span<const int> arrived,
                            bool rescale) {
  Decoding d = code.decode(arrived);
  if (d.decodable || !rescale) return d;
  const int covered = code.covered_groups(arrived);
  if (covered == 0) return d;  // nothing to scale: every alpha is 0
  const double factor = double(code.groups().size()) / covered;
  std::vector<double> scaled = d.coefficients;
  for (double& a : scaled) a *= factor;
  return evaluate_decoding(select_rows(code.encoding(), arrived), std::move(scaled));
}

bool erasure_head_can_stop(const FractionalRepetitionCode& code, std::span<const int> arrived,
                           std::size_t collect) {
  return arrived.size() >= collect ||
         code.covered_groups(arrived) == static_cast<int>(code.groups().size());
}

}  // namespace fastk::coding
