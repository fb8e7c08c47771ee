// The "chunk" fidelity: a discrete-event simulation of every rank of a ring or tree collective,
// message by message, for validation against the closed forms up to about a thousand ranks.
// Each rank's outgoing link serves its messages in the order they become ready; a message of c
// bytes on a hop of tier t occupies the link for c / B_t and arrives a_t later (the protocol's
// step latency, which does not occupy the link). A rank forwards a message as soon as the data
// it depends on has arrived (dataflow, no global barrier between steps).
//  - ring: laps x (p-1) steps of n/p bytes per rank (all-reduce 2 laps, reduce-scatter and
//    all-gather 1); the hop from rank r to r+1 crosses the outermost tier between them.
//  - tree: the buffer is cut into chunks that flow up a chain inside each node and NCCL's two
//    complementary binary trees across nodes (half the data each), then back down.
#pragma once

#include <cstdint>

#include "models/collective/collective.hpp"

namespace sp::models {

struct ChunkResult {
  Duration time;
  std::uint64_t events = 0;
};

/// Trees move messages of at most the protocol's chunk; rings one message per step. Throws
/// ModelError for algorithms this fidelity does not play.
ChunkResult simulate_chunks(const Platform& platform, const Group& group, CollectiveOp op, Algorithm algorithm,
                            Protocol protocol, Bytes n);

}  // namespace sp::models
