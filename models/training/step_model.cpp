#include "models/training/step_model.hpp"

#include <deque>
#include <functional>

#include "models/collective/fidelity.hpp"
#include "models/compute/compute_model.hpp"
#include "models/training/buckets.hpp"
#include "sim/core/engine.hpp"

namespace sp::models {

namespace {

// The communication stream: collectives run one at a time, in the order they were queued. A
// job starts its collective and calls the continuation it is given when the collective ends.
class CommStream {
 public:
  using Job = std::function<void(std::function<void()>)>;
  explicit CommStream(Engine& engine) : engine_(engine) {}

  void enqueue(Job job) {
    queue_.push_back(std::move(job));
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
    Job job = std::move(queue_.front());
    queue_.pop_front();
    const SimTime began = engine_.now();
    job([this, began] {
      busy_total_ += engine_.now() - began;
      start_next();
    });
  }

  Engine& engine_;
  std::deque<Job> queue_;
  bool busy_ = false;
  SimTime idle_since_;
  Duration busy_total_;
};

}  // namespace

StepResult simulate_step(const Workload& w, const Platform& p, int accelerators, double batch, Fidelity fidelity) {
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
  FlowNetwork net(engine);
  const std::vector<std::size_t> links = add_tier_links(net, p);
  const SimTime backward_start = SimTime::zero() + r.forward;
  const Group dp = packed_group(p.topology, accelerators);
  std::deque<Selected> chosen;  // kept alive while their flows run
  for (const GradientBucket& b : buckets) {
    CommStream::Job job;
    if (accelerators <= 1) {
      job = [](std::function<void()> done) { done(); };
    } else if (fidelity == Fidelity::flow) {
      const Selected& s = chosen.emplace_back(select_collective(p, dp, CollectiveOp::all_reduce, b.bytes));
      job = [&engine, &net, &links, &p, &s, bytes = b.bytes](std::function<void()> done) {
        start_collective_flows(engine, net, links, p, s.terms, bytes, std::move(done));
      };
    } else {
      const Duration d = time_collective(p, dp, CollectiveOp::all_reduce, b.bytes, {}, fidelity).time;
      job = [&engine, d](std::function<void()> done) { engine.schedule_after(d, std::move(done)); };
    }
    engine.schedule_at(backward_start + b.ready, [&comm, job = std::move(job)] { comm.enqueue(job); });
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
