#include "models/training/step_model.hpp"

#include <deque>

#include "models/collective/collective.hpp"
#include "models/compute/compute_model.hpp"
#include "models/training/buckets.hpp"
#include "sim/core/engine.hpp"

namespace sp::models {

namespace {

// The communication stream: collectives run one at a time, in the order they were queued.
class CommStream {
 public:
  explicit CommStream(Engine& engine) : engine_(engine) {}

  void enqueue(Duration d) {
    queue_.push_back(d);
    if (!busy_) start_next();
  }
  SimTime idle_since() const { return idle_since_; }
  Duration busy_total() const { return busy_total_; }

 private:
  void start_next() {
    if (queue_.empty()) {
      busy_ = false;
      idle_since_ = engine_.now();
      return;
    }
    busy_ = true;
    const Duration d = queue_.front();
    queue_.pop_front();
    busy_total_ += d;
    engine_.schedule_after(d, [this] { start_next(); });
  }

  Engine& engine_;
  std::deque<Duration> queue_;
  bool busy_ = false;
  SimTime idle_since_;
  Duration busy_total_;
};

}  // namespace

StepResult simulate_step(const Workload& w, const Platform& p, int accelerators, double batch) {
  const ComputeModel compute = compute_model_for(w, p.accelerator.peak.at(w.precision));
  StepResult r;
  std::vector<Duration> backward_time;
  for (const LayerGroup& l : w.layers) {
    r.forward += compute.time(l.forward, batch) * l.repeat;
    backward_time.push_back(compute.time(l.backward, batch));
    r.backward += backward_time.back() * l.repeat;
  }
  // The optimizer streams parameters, gradients and states through memory once.
  r.optimizer = w.optimizer_traffic_per_parameter * static_cast<double>(w.trainable_parameters()) /
                p.accelerator.memory_bandwidth;

  const std::vector<GradientBucket> buckets =
      make_buckets(w.layers, backward_time, w.gradient_bytes_per_parameter, w.gradient_bucket);
  r.buckets = static_cast<int>(buckets.size());

  Engine engine;
  CommStream comm(engine);
  const SimTime backward_start = SimTime::zero() + r.forward;
  const Group dp = packed_group(p.topology, accelerators);
  for (const GradientBucket& b : buckets) {
    const Duration d = accelerators > 1 ? select_collective(p, dp, CollectiveOp::all_reduce, b.bytes).time
                                        : Duration::zero();
    engine.schedule_at(backward_start + b.ready, [&comm, d] { comm.enqueue(d); });
  }
  const SimTime backward_end = backward_start + r.backward;
  engine.run();

  const SimTime update_start = max(backward_end, comm.idle_since());
  r.step = (update_start - SimTime::zero()) + r.optimizer;
  r.communication = comm.busy_total();
  r.exposed_communication = r.step - r.forward - r.backward - r.optimizer;
  r.events = engine.events_processed();
  return r;
}

}  // namespace sp::models
