// The "chunk" fidelity: a discrete-event simulation of every rank of a ring or tree collective,
// message by message, for validation against the closed forms up to about a thousand ranks.
// Each rank's outgoing link serves its messages in the order they become ready; a message of c
// bytes on a hop of tier t occupies the link for c / B_t and arrives a_t later (the protocol's
// step latency, which does not occupy the link). A rank forwards a message as soon as the data
// it depends on has arrived (dataflow, no global barrier between steps).
//  - ring: laps x (p-1) steps of n/p bytes per rank (all-reduce 2 laps, reduce-scatter and
//    all-gather 1); the hop from rank r to r+1 crosses the outermost tier between them.
//  - broadcast (NCCL plays it on the ring only): a chain from the root along the ring's order,
//    the buffer cut into the protocol's chunks, each forwarded on arrival.
//  - tree: the buffer is cut into chunks that flow up a chain inside each node and NCCL's two
//    complementary binary trees across nodes (half the data each), then back down.
#pragma once

#include <cstdint>

#include "models/collective/collective.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

struct ChunkResult {
  Duration time;
  std::uint64_t events = 0;
};

/// The most messages the chunk fidelity plays in one collective. Measured on this project's
/// 2-core machine: a tree all-reduce of 8 GiB over 1,024 ranks (134 M messages) took 36 s and
/// 1.3 GB, about 0.27 us and 10 B a message, so 10^8 is about 1 GB and half a minute: a ring of
/// 4,096 ranks or a tree over 1,024 ranks of 4 GiB. Beyond it the flow fidelity shares the same
/// links without playing every message.
inline constexpr std::uint64_t kChunkMessageBudget = 100'000'000;

/// A collective beyond kChunkMessageBudget: a request for more work than the fidelity is for.
class ChunkBudgetError : public ModelError {
 public:
  using ModelError::ModelError;
};

/// The messages simulate_chunks would play: a ring laps x (p - 1) steps of p messages; a broadcast
/// each chunk over p - 1 hops; a tree each chunk up and down every rank's hop, in each of its trees.
std::uint64_t chunk_messages(const Platform& platform, const Group& group, CollectiveOp op, Algorithm algorithm,
                             Protocol protocol, Bytes n);

/// Trees move messages of at most the protocol's chunk; rings one message per step. Throws
/// ModelError for algorithms this fidelity does not play, ChunkBudgetError beyond its budget.
ChunkResult simulate_chunks(const Platform& platform, const Group& group, CollectiveOp op, Algorithm algorithm,
                            Protocol protocol, Bytes n);

}  // namespace sp::models
