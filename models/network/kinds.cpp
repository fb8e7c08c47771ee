#include "models/network/kinds.hpp"

namespace sp::models {

const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all_reduce";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::broadcast: return "broadcast";
    case CollectiveOp::all_to_all: return "all_to_all";
  }
  return "?";
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::nvls: return "nvls";
    case Algorithm::sharp: return "sharp";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::halving_doubling: return "halving_doubling";
    case Algorithm::pairwise: return "pairwise";
  }
  return "?";
}

const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
    case Protocol::simple: return "Simple";
  }
  return "?";
}

const char* host_cpu_name(HostCpu c) {
  switch (c) {
    case HostCpu::intel: return "intel";
    case HostCpu::amd: return "amd";
    case HostCpu::arm: return "arm";
  }
  return "?";
}

namespace {
std::string lowercase(const std::string& s) {
  std::string out;
  for (char c : s) out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

template <class E, std::size_t N, class NameOf>
std::optional<E> by_name(const std::array<E, N>& all, const std::string& name, NameOf name_of) {
  const std::string lower = lowercase(name);
  for (E e : all) {
    if (lowercase(name_of(e)) == lower) return e;
  }
  return std::nullopt;
}
}  // namespace

std::optional<CollectiveOp> op_from_name(const std::string& n) { return by_name(kCollectiveOps, n, op_name); }
std::optional<Algorithm> algorithm_from_name(const std::string& n) { return by_name(kAlgorithms, n, algorithm_name); }
std::optional<Protocol> protocol_from_name(const std::string& n) { return by_name(kProtocols, n, protocol_name); }
std::optional<HostCpu> host_cpu_from_name(const std::string& n) {
  return by_name(std::array{HostCpu::intel, HostCpu::amd, HostCpu::arm}, n, host_cpu_name);
}

std::optional<HostCpu> host_cpu_of_processor(const std::string& processor) {
  const std::string lower = lowercase(processor);
  const auto has = [&lower](const char* word) { return lower.find(word) != std::string::npos; };
  if (has("amd") || has("epyc")) return HostCpu::amd;
  if (has("intel") || has("xeon")) return HostCpu::intel;
  if (has("grace") || has("arm") || has("neoverse") || has("altra")) return HostCpu::arm;
  return std::nullopt;
}

}  // namespace sp::models
