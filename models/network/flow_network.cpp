#include "models/network/flow_network.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sp::models {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

std::size_t FlowNetwork::add_link(BytesPerSecond capacity) {
  if (!(capacity.value() > 0)) throw std::invalid_argument("a link needs a positive capacity");
  capacity_.push_back(capacity.value());
  carried_.push_back(0);
  return capacity_.size() - 1;
}

void FlowNetwork::start(Bytes bytes, std::vector<Use> uses, std::function<void()> done,
                        std::optional<BytesPerSecond> cap) {
  advance();
  for (const Use& u : uses) {
    if (u.link >= capacity_.size() || !(u.weight > 0)) throw std::invalid_argument("bad link use");
  }
  if (uses.empty() && !cap) throw std::invalid_argument("a flow needs a link or a cap");
  flows_.push_back(Flow{bytes.value(), std::move(uses), cap ? cap->value() : kInf, 0, std::move(done)});
  reallocate();
}

double FlowNetwork::carried(std::size_t link) const { return carried_.at(link); }

std::vector<double> FlowNetwork::rates() const {
  std::vector<double> r;
  for (const Flow& f : flows_) r.push_back(f.rate);
  return r;
}

void FlowNetwork::advance() {
  const double dt = to_seconds(engine_.now() - updated_);
  if (dt > 0) {
    for (Flow& f : flows_) {
      f.remaining -= f.rate * dt;
      for (const Use& u : f.uses) carried_[u.link] += f.rate * dt * u.weight;
    }
  }
  updated_ = engine_.now();
}

// Progressive filling: raise every unfrozen flow's rate together until a link fills up or a flow
// reaches its cap; freeze those flows; repeat.
void FlowNetwork::reallocate() {
  const std::size_t n = flows_.size();
  std::vector<bool> frozen(n, false);
  std::vector<double> used(capacity_.size(), 0.0);
  std::size_t left = n;
  double level = 0;
  for (Flow& f : flows_) f.rate = 0;
  while (left > 0) {
    std::vector<double> weight(capacity_.size(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      for (const Use& u : flows_[i].uses) weight[u.link] += u.weight;
    }
    double next = kInf;
    for (std::size_t l = 0; l < capacity_.size(); ++l) {
      if (weight[l] > 0) next = std::min(next, (capacity_[l] - used[l]) / weight[l]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen[i]) next = std::min(next, flows_[i].cap);
    }
    level = std::max(level, next);
    // Freeze the flows on saturated links and those at their cap.
    std::vector<bool> saturated(capacity_.size(), false);
    for (std::size_t l = 0; l < capacity_.size(); ++l) {
      saturated[l] = weight[l] > 0 && (capacity_[l] - used[l]) / weight[l] <= level * (1 + 1e-12);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      bool stop = flows_[i].cap <= level * (1 + 1e-12);
      for (const Use& u : flows_[i].uses) stop = stop || saturated[u.link];
      if (!stop) continue;
      frozen[i] = true;
      --left;
      flows_[i].rate = level;
      for (const Use& u : flows_[i].uses) used[u.link] += u.weight * level;
    }
  }
  // Keep exactly one pending completion: the earliest.
  if (next_) engine_.cancel(*next_);
  next_.reset();
  double soonest = kInf;
  for (const Flow& f : flows_) soonest = std::min(soonest, std::max(0.0, f.remaining) / f.rate);
  if (soonest == kInf) return;
  const Duration wait = Duration::from_ps(static_cast<std::int64_t>(std::ceil(soonest * 1e12)));
  next_ = engine_.schedule_after(wait, [this] {
    next_.reset();
    advance();
    std::vector<std::function<void()>> finished;
    for (std::size_t i = 0; i < flows_.size();) {
      // Done when less than a picosecond's worth (or a millionth of a byte) is left.
      if (flows_[i].remaining <= std::max(flows_[i].rate * 1e-12, 1e-6)) {
        finished.push_back(std::move(flows_[i].done));
        flows_.erase(flows_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    reallocate();
    for (auto& f : finished) {
      if (f) f();
    }
  });
}

}  // namespace sp::models
