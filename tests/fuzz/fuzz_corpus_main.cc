// Runs a fuzz target without a fuzzing engine: its committed corpus (the seeds and every input
// a fuzzing session found interesting, README "Fuzzing") replayed once.
//
//   <target>_replay CORPUS_DIR
#include <cstdio>

#include "tests/fuzz/corpus_replay.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::size_t replayed = fastk::testing::replay_corpus(argv[1]);
  if (replayed == 0) return 1;
  std::printf("replayed %zu corpus files of %s\n", replayed, argv[1]);
  return 0;
}
