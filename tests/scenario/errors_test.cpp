// Bad input: each case is a scenario in tests/data/bad/ (or a good one with a bad --set), and
// the one-line message the user sees, which must name the file, the line and the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "tests/input_error_message.hpp"

namespace sp {

namespace {

struct BadCase {
  const char* file;
  std::vector<const char*> overrides;
  const char* expected = "";  // the whole message after the file name
};

std::string bad(const std::string& name) { return std::string(SP_TEST_DATA) + "/bad/" + name; }

models::Catalog catalog() { return models::Catalog(std::filesystem::path(SP_SOURCE_DIR) / "models"); }

std::string message_of(const BadCase& c) {
  return input_error_message([&] {
    std::vector<config::Override> overrides;
    for (const char* o : c.overrides) overrides.push_back(config::parse_override(o));
    load_scenario(bad(c.file), overrides, catalog());
  });
}

}  // namespace

TEST(BadScenario, EachGivesOneClearLocatedMessage) {
  const std::string platform = std::string(SP_SOURCE_DIR) + "/scenarios/platforms/dgx_h100.yaml";
  const std::vector<BadCase> cases = {
      {"unknown_key.yaml", {},
       ":11:1: acelerators: unknown key (did you mean 'accelerators'? valid keys: name, description, seed, "
       "workload, platform, accelerators, batch, fidelity, parallelism, samples, calibration, launch, anchor, reliability, rcp_round)"},
      {"no_unit.yaml", {},
       ":8:16: platform.scale_up.bandwidth: \"450\" has no unit (expected a bandwidth such as \"450 GB/s\" "
       "or \"400 Gb/s\")"},
      {"wrong_unit.yaml", {},
       ":11:15: platform.protocols.simple.launch: \"5 GB/s\" is a bandwidth (expected a time such as \"2 us\")"},
      {"unknown_unit.yaml", {}, ":10:20: platform.scale_out.nic_bandwidth: unknown unit \"Gbit/sec\""},
      {"negative_count.yaml", {}, ":11:19: accelerators[1]: must be at least 1, got -16"},
      {"zero_per_node.yaml", {}, ":6:26: platform.accelerators_per_node: must be at least 1, got 0"},
      {"not_multiple.yaml", {},
       ":11:19: accelerators[1]: 12 accelerators is not a whole number of 8-accelerator nodes (use a "
       "multiple of accelerators_per_node, or a divisor of it for part of one node)"},
      {"unknown_accelerator.yaml", {},
       ":5:16: platform.accelerator: unknown accelerator 'H100-SXM5-80G' (did you mean 'H100-SXM5-80GB'? known: "},
      {"unknown_workload.yaml", {}, ":2:11: workload: unknown workload 'bret' (did you mean 'bert'? known: "},
      {"missing_batch_entry.yaml", {},
       ":14:5: batch.global_by_accelerators: has no global batch for 16 accelerators (add an entry '16: "
       "<global batch>')"},
      {"two_batch_policies.yaml", {},
       ":13:3: batch: give exactly one of global, per_accelerator, global_by_accelerators"},
      {"syntax.yaml", {}, ":4:6: YAML syntax error: "},
      {"missing_key.yaml", {}, ":1:1: workload: missing required key"},
      {"bad_efficiency.yaml", {}, ":6:63: platform.scale_up.efficiency: must be in (0, 1], got 1.5"},
      {"duplicate_key.yaml", {}, ":14:1: seed: duplicate key"},
      {"missing_include.yaml", {}, ":3:11: platform: cannot open: No such file or directory"},
      {"not_ascending.yaml", {}, ":11:20: accelerators[1]: accelerator counts must be in ascending order"},
      {"unknown_fidelity.yaml", {}, ":10:11: fidelity: unknown fidelity 'exact' (valid: analytic, flow, chunk)"},
      {"no_such_file.yaml", {}, ": cannot open: No such file or directory"},
  };
  for (const BadCase& c : cases) {
    const std::string msg = message_of(c);
    const std::string want = bad(c.file) + c.expected;
    EXPECT_EQ(msg.substr(0, want.size()), want) << c.file;
  }
}

TEST(BadScenario, OverridesAreReportedAtTheArgument) {
  const std::vector<std::pair<BadCase, std::string>> cases = {
      {{"good.yaml", {"platform.scale_out.nics_per_node=-1"}},
       "--set platform.scale_out.nics_per_node=-1: platform.scale_out.nics_per_node: must not be negative"},
      {{"good.yaml", {"platform.scale_out.nics_per_node=0"}},
       ":11:19: accelerators[1]: 16 accelerators span several nodes, but platform 'test platform' has no "
       "scale-out NICs (scale_out.nics_per_node is 0)"},
      {{"good.yaml", {"platform.scale_up.bandwdth=\"1 GB/s\""}},
       "--set platform.scale_up.bandwdth=\"1 GB/s\": platform.scale_up.bandwdth: unknown key (did you mean "
       "'bandwidth'? valid keys: kind, size, bandwidth, efficiency, in_network_reduction, communication_sms)"},
      {{"good.yaml", {"batch.global=0"}}, "--set batch.global=0: batch.global: must be at least 1, got 0"},
      {{"good.yaml", {"seed"}}, "--set seed: expected key.path=value (e.g. --set platform.scale_out.nics=4)"},
      // A mapping the override creates is the argument's too, not the scenario file's.
      {{"good.yaml", {"foo.bar=1"}}, "--set foo.bar=1: foo: unknown key (valid keys: "},
      // The energy model's platform keys.
      {{"good.yaml", {"platform.power.pue=0.9"}}, "--set platform.power.pue=0.9: platform.power.pue: must be between 1 and 3"},
      {{"good.yaml", {"platform.power.host=\"-1 kW\""}},
       "platform.power.host: must be between 0 W and 1 MW"},
      {{"good.yaml", {"platform.power.switch=\"5 GB/s\""}}, "platform.power.switch: \"5 GB/s\" is a bandwidth"},
      {{"good.yaml", {"platform.power.psu_efficiency=1.2"}}, "platform.power.psu_efficiency: must be above 0.5 and at most 1"},
      {{"good.yaml", {"platform.power.switch_radix=1"}}, "platform.power.switch_radix: must be between 2 and 4096 ports"},
      // Oversubscription divides a leaf's uplinks: without leaves it would change nothing, silently.
      {{"good.yaml", {"platform.scale_out.oversubscription=4"}},
       "platform.scale_out.oversubscription: oversubscription needs nodes_per_leaf"},
      {{"good.yaml", {"platform.gpu_speed_spread=0.2"}}, "platform.gpu_speed_spread: must be between 0 and 0.1"},
      // Upper ends (audit): 1e300 GB/s, 1e9 NICs a node and oversubscription 1e300 were taken.
      {{"good.yaml", {"platform.scale_up.bandwidth=\"1e6 TB/s\""}}, "platform.scale_up.bandwidth: \"1e6 TB/s\" is above 1 PB/s"},
      {{"good.yaml", {"platform.scale_up.bandwidth=\"1e300 GB/s\""}}, "\"1e300 GB/s\" is beyond the range of a number"},
      {{"good.yaml", {"seed=18446744073709551615"}}, "seed: \"18446744073709551615\" is beyond the 64-bit integers"},
      {{"good.yaml", {"platform.scale_out.nics_per_node=1000000000"}}, "platform.scale_out.nics_per_node: must be at most 1024"},
      {{"good.yaml", {"platform.scale_out.oversubscription=1e300"}}, "platform.scale_out.oversubscription: must be at most 1000"},
      // Domains smaller than the node need a host tier to join them: said, not "missing key".
      {{"good.yaml", {"platform.scale_up.size=4"}},
       "platform.accelerators_per_node: 8 accelerators a node in scale-up domains of 4: needs a `host` tier that joins the domains"},
      {{"good.yaml", {"platform.collective_memory_traffic=9"}},
       "platform.collective_memory_traffic: must be between 1 and 4 (bytes of HBM traffic per byte on the wire)"},
      // A layout recipe for smaller parts: sizes only, each a count.
      {{"good.yaml", {"parallelism.otherwise=[]"}}, "parallelism.otherwise: needs at least one layout"},
      {{"good.yaml", {"parallelism.otherwise=[{tensor: 0}]"}}, "parallelism.otherwise[0].tensor: must be at least 1"},
      {{"good.yaml", {"parallelism.otherwise=[{tensr: 2}]"}}, "parallelism.otherwise[0].tensr: unknown key"},
      {{"good.yaml", {"parallelism.evaluation_overlaps_all_gathers=sometimes"}},
       "parallelism.evaluation_overlaps_all_gathers: \"sometimes\" is not true or false"},
      {{"good.yaml", {"parallelism.distributed_optimizer=zero3"}},
       "parallelism.distributed_optimizer: unknown sharding 'zero3' (valid: none, global, within_node)"},
      {{"good.yaml", {"parallelism.dgrad_reduce_scatter=sideways"}},
       "parallelism.dgrad_reduce_scatter: unknown reduce-scatter 'sideways' (valid: pipelined, bulk, bulk_under_context_parallel)"},
      {{"good.yaml", {"parallelism.tensor_parallel_not_overlapped=[qkv, proj]"}},
       "parallelism.tensor_parallel_not_overlapped[1]: unknown GEMM 'proj' (valid: qkv, fc1)"},
      {{"good.yaml", {"parallelism.tensor_parallel_not_overlapped=[fc1, fc1]"}},
       "parallelism.tensor_parallel_not_overlapped[1]: 'fc1' is listed twice"},
      {{"good.yaml", {"parallelism.recompute=some"}},
       "parallelism.recompute: unknown recompute 'some' (valid: none, selective, full)"},
      // Failures, checkpoints and restarts (models/goodput/reliability.hpp).
      {{"good.yaml", {"reliability.sources=[{name: gpu, per: rack, mtbf: \"1000 h\"}]"}},
       "reliability.sources[0].per: unknown component 'rack' (valid: accelerator, node)"},
      {{"good.yaml", {"reliability.sources=[{name: gpu, per: node, mtbf: \"-3 h\"}]"}},
       "reliability.sources[0].mtbf: must be greater than 0"},
      {{"good.yaml", {"reliability.sources=[{name: gpu, per: node, mtbf: 30000}]"}},
       "reliability.sources[0].mtbf: \"30000\" has no unit"},
      {{"good.yaml", {"reliability.sources=[{name: a, per: node, mtbf: \"1 d\"}, {name: a, per: node, mtbf: \"2 d\"}]"}},
       "reliability.sources[1].name: failure source 'a' is listed twice"},
      {{"good.yaml", {"reliability.checkpoint.interval=\"0 min\""}},
       "reliability.checkpoint.interval: must be greater than 0, or 'optimal'"},
      {{"good.yaml", {"reliability.checkpoint.write_per_node=\"0 GB/s\""}},
       "reliability.checkpoint.write_per_node: must be greater than 0"},
      {{"good.yaml", {"reliability.spare_nodes=-1"}}, "reliability.spare_nodes: must be a count from 0, or 'unlimited'"},
      {{"good.yaml", {"reliability.detecton=\"1 min\""}}, "reliability.detecton: unknown key (did you mean 'detection'?"},
      {{"good.yaml", {"platform.reliability.failures=maybe"}}, "platform.reliability.failures: \"maybe\" is not true or false"},
  };
  for (const auto& [c, expected] : cases) {
    const std::string msg = message_of(c);
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  }
}

TEST(GoodScenario, LoadsAndNamesItsParts) {
  const ScenarioSpec s = load_scenario(bad("good.yaml"), {}, catalog());
  EXPECT_EQ(s.name, "good");
  EXPECT_EQ(s.workload.name, "bert");
  EXPECT_EQ(s.platform.accelerator.name, "H100-SXM5-80GB");
  EXPECT_EQ(s.accelerators, (std::vector<int>{8, 16}));
  EXPECT_EQ(s.batch.global_batch(16), 768);
  EXPECT_EQ(s.file_sha256.size(), 64u);
}

TEST(GoodScenario, CalibrationFileIsFoundBesideTheScenario) {
  // A parameter file named relative to the scenario (a clang warning found the path was built from
  // itself); `none` runs uncalibrated, so BERT's software efficiency differs from the default's.
  const auto load = [](const char* value) {
    return load_scenario(bad("good.yaml"), {config::parse_override(std::string("calibration=") + value)}, catalog());
  };
  const ScenarioSpec rel = load("../../../calibration/params/mlperf_v4.1.yaml");
  const ScenarioSpec none = load("none");
  const ScenarioSpec def = load_scenario(bad("good.yaml"), {}, catalog());
  EXPECT_EQ(rel.workload.software_efficiency, def.workload.software_efficiency);
  EXPECT_NE(none.workload.software_efficiency, def.workload.software_efficiency);
  EXPECT_NE(message_of({"good.yaml", {"calibration=no_such_params.yaml"}}).find("no_such_params.yaml"), std::string::npos);
  // An entry for a workload no file describes would calibrate nothing, silently.
  EXPECT_NE(message_of({"good.yaml", {"calibration=params_unknown_workload.yaml"}})
                .find("params_unknown_workload.yaml:3:9: workloads.bret: no workload in models/workloads is named 'bret'"),
            std::string::npos)
      << message_of({"good.yaml", {"calibration=params_unknown_workload.yaml"}});
}

TEST(GoodScenario, RcpRoundPicksThatRoundsReferenceConvergence) {
  // Stable Diffusion at rcp_round 5.0 meets v5.0's reference (1,706,666.67 samples at GBS 256,
  // 2,048,000 in v4.1's); BERT's rounds agree, so its table is the file's whatever the round. A
  // round that is not MAJOR.MINOR is an error at the key.
  const auto load = [](const char* workload, const char* round) {
    std::vector<config::Override> o{config::parse_override(std::string("workload=") + workload)};
    if (*round) o.push_back(config::parse_override(std::string("rcp_round=") + round));
    return load_scenario(bad("good.yaml"), o, catalog());
  };
  EXPECT_DOUBLE_EQ(load("stable_diffusion", "5.0").workload.convergence.points.front().mean, 1706666.6667);
  EXPECT_EQ(load("stable_diffusion", "5.0").workload.convergence.round, "5.0");
  EXPECT_DOUBLE_EQ(load("stable_diffusion", "").workload.convergence.points.front().mean, 2048000.0);
  EXPECT_EQ(load("bert", "5.0").workload.convergence.points.size(), load("bert", "").workload.convergence.points.size());
  EXPECT_EQ(message_of({"good.yaml", {"rcp_round=5"}}), "--set rcp_round=5: rcp_round: '5' is not an MLPerf round (write MAJOR.MINOR, e.g. \"5.0\")");
}

}  // namespace sp
