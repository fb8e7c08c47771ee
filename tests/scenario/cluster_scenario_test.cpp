// Cluster scenarios (sim/scenario/cluster.hpp) end to end: a job alone on the cluster is its
// `run` result exactly; placement changes what neighbours cost; bad input is refused at its key.
#include <gtest/gtest.h>

#include <fstream>

#include "sim/core/error.hpp"
#include "sim/scenario/cluster.hpp"
#include "tests/input_error_message.hpp"
#include "shell.hpp"

namespace sp {
namespace {

models::Catalog catalog() { return models::Catalog(std::filesystem::path(SP_SOURCE_DIR) / "models"); }

std::string write(const std::string& name, const std::string& text) {
  const auto dir = testing::fresh_dir("cluster", name);
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "cluster.yaml").string();
  std::ofstream(file) << text;
  return file;
}

const std::string kPlatform = "platform: !include " + std::string(SP_SOURCE_DIR) + "/scenarios/platforms/dgx_h100.yaml\n";

}  // namespace

TEST(ClusterScenario, AJobAloneIsItsRunExactly) {
  // BERT on 64 GPUs (8 nodes) alone on 4 leaves of 2 nodes at 4:1, packed: its step is the one
  // `run` gives at flow fidelity on that fabric, to the ps, and nothing slows it.
  const std::string file = write("alone", kPlatform +
                                              "name: alone\nfabric: {leaves: 4, nodes_per_leaf: 2, oversubscription: 4}\n"
                                              "steps: 3\njobs:\n  - {name: b, workload: bert, accelerators: [64], batch: {typical: true}}\n");
  const ClusterSpec spec = load_cluster(file, {}, catalog());
  const ClusterResult res = run_cluster(spec);
  ASSERT_EQ(res.rows.size(), 1u);
  const ClusterJobRow& r = res.rows[0];
  ASSERT_EQ(r.status, "ok");
  const std::vector<ScalingPoint> run = run_scenario(spec.jobs[0].scenario);
  EXPECT_EQ(r.step_alone.ps(), run[0].estimate.step.step.ps());
  EXPECT_EQ(r.step_together.ps(), r.step_alone.ps());
  EXPECT_EQ(r.ttt_together_s, r.ttt_alone_s);
  EXPECT_EQ(r.ttt_alone_s, to_seconds(run[0].estimate.time_to_train));
  EXPECT_EQ(r.leaf_nodes, (std::vector<int>{2, 2, 2, 2}));
}

TEST(ClusterScenario, SpreadJobsShareUplinksThatPackedJobsDoNot) {
  // Two Stable Diffusion jobs of 64 GPUs (8 nodes) on 8 leaves of 2 nodes at 8:1 (a leaf's
  // uplinks carry a quarter of a node's NICs). Packed, each fills 4 leaves of its own; spread,
  // every leaf holds a node of each, and their gradient rings cross its uplinks together.
  const std::string file = write("two", kPlatform +
                                            "name: two\nfabric: {leaves: 8, nodes_per_leaf: 2, oversubscription: 8}\n"
                                            "placement: [packed, spread]\nsteps: 5\njobs:\n"
                                            "  - {name: a, workload: stable_diffusion, accelerators: [64], batch: {typical: true}}\n"
                                            "  - {name: b, workload: stable_diffusion, accelerators: [64], batch: {typical: true}, start: \"5 ms\"}\n");
  const ClusterResult res = run_cluster(load_cluster(file, {}, catalog()));
  ASSERT_EQ(res.rows.size(), 4u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(res.rows[i].placement, models::Placement::packed);
    EXPECT_EQ(res.rows[i].step_together.ps(), res.rows[i].step_alone.ps());
  }
  for (std::size_t i = 2; i < 4; ++i) {
    EXPECT_EQ(res.rows[i].placement, models::Placement::spread);
    EXPECT_EQ(res.rows[i].leaf_nodes, std::vector<int>(8, 1));
    EXPECT_GT(res.rows[i].step_together, res.rows[i].step_alone);
    EXPECT_GT(res.rows[i].ttt_together_s, res.rows[i].ttt_alone_s);
    EXPECT_GT(res.rows[i].busiest_uplink, 0);
  }
  EXPECT_FALSE(res.timeline.empty());
  // Listed nodes: job a on nodes 0-7 (leaves 0-3), b on 8-15 (leaves 4-7) is the packed case;
  // interleaved (a on even nodes, b on odd) the spread one, to the ps.
  const auto listed = [&](const std::string& a, const std::string& b) {
    const std::string text = kPlatform + "name: two\nfabric: {leaves: 8, nodes_per_leaf: 2, oversubscription: 8}\n"
                             "placement: explicit\nsteps: 5\njobs:\n"
                             "  - {name: a, workload: stable_diffusion, accelerators: [64], batch: {typical: true}, nodes: " + a + "}\n"
                             "  - {name: b, workload: stable_diffusion, accelerators: [64], batch: {typical: true}, start: \"5 ms\", nodes: " + b + "}\n";
    return run_cluster(load_cluster(write("listed", text), {}, catalog()));
  };
  const ClusterResult apart = listed("[0-7]", "[\"8-15\"]");
  const ClusterResult mixed = listed("[0, 2, 4, 6, 8, 10, 12, 14]", "[1, 3, 5, 7, 9, 11, 13, 15]");
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(apart.rows[i].step_together.ps(), res.rows[i].step_together.ps());
    EXPECT_EQ(mixed.rows[i].step_together.ps(), res.rows[i + 2].step_together.ps());
  }
}

TEST(ClusterScenario, BadInputIsRefusedAtItsKey) {
  const std::string job = "jobs:\n  - {name: b, workload: bert, accelerators: [64], batch: {typical: true}}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kPlatform + "name: x\nfabric: {leaves: 1, nodes_per_leaf: 2}\n" + job, "fabric.leaves: 1 leaves of 2 nodes hold 2 nodes; the jobs need 8"},
      {kPlatform + "name: x\nfabric: {leaves: 8}\n" + job + "  - {name: b, workload: bert, accelerators: [64], batch: {typical: true}}\n",
       "job name 'b' appears twice"},
      {kPlatform + "name: x\nfabric: {leaves: 8}\njobs:\n  - {name: a, workload: bert, accelerators: [64, 128], batch: {typical: true}}\n"
                   "  - {name: b, workload: bert, accelerators: [64, 128], batch: {typical: true}}\n",
       "only one job may list several accelerator counts (job 'a' does)"},
      {kPlatform + "name: x\nfabric: {leaves: 8}\njobs:\n  - {name: a, workload: bert, accelerators: [4], batch: {global: 32}}\n",
       "4 accelerators is not a whole number of 8-accelerator nodes"},
      {kPlatform + "name: x\nfabric: {leaves: 8}\nplacement: scattered\n" + job, "placement: unknown placement 'scattered'"},
      {kPlatform + "name: x\nfabric: {leaves: 8, oversubscription: 0.5}\n" + job, "fabric.oversubscription: must be between 1"},
      {kPlatform + "name: x\nfabric: {leaves: 8, nodes_per_leaf: 2}\nplacement: explicit\n" + job,
       "the explicit placement needs 8 nodes of job 'b' (`nodes`), 0 are listed"},
      {kPlatform + "name: x\nfabric: {leaves: 8, nodes_per_leaf: 2}\njobs:\n  - {name: b, workload: bert, accelerators: [64], "
                   "batch: {typical: true}, nodes: [0-7, 7]}\n",
       "node 7 is listed twice"},
      {kPlatform + "name: x\nfabric: {leaves: 8, nodes_per_leaf: 2}\njobs:\n  - {name: b, workload: bert, accelerators: [64], "
                   "batch: {typical: true}, nodes: [0-16]}\n",
       "'0-16' is not a node of the cluster (0 to 15)"},
      {kPlatform + "name: x\nfabric: {leaves: 8}\n" + "jobs:\n  - {name: b, workload: bert, accelerators: [64], batch: {typical: true}, bogus: 1}\n",
       "bogus"},
      // Without the explicit placement a node list places nothing: it was ignored, silently.
      {kPlatform + "name: x\nfabric: {leaves: 8, nodes_per_leaf: 2}\njobs:\n  - {name: b, workload: bert, accelerators: [64], "
                   "batch: {typical: true}, nodes: [0-7]}\n",
       "jobs[0].nodes: a job's nodes place it only under placement 'explicit'"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string file = write("bad", text);
    const std::string message = input_error_message([&] { load_cluster(file, {}, catalog()); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

}  // namespace sp
