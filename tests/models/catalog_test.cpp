#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "models/catalog.hpp"
#include "models/workloads/workload.hpp"
#include "sim/core/error.hpp"
#include "sim/config/loader.hpp"

namespace sp::models {

namespace {
Catalog catalog() { return Catalog(std::filesystem::path(SP_SOURCE_DIR) / "models"); }

config::ConfigNode name_node(const std::string& name) {
  return config::load_string("name: \"" + name + "\"\n", "names.yaml").at("name");
}
}  // namespace

// Every accelerator string of calibration/data/mlperf/results_v4.1.csv (column `accelerator`)
// resolves to a hardware file.
TEST(Catalog, EveryMlperfV41AcceleratorNameResolves) {
  const std::pair<const char*, const char*> names[] = {
      {"NVIDIA H100-SXM5-80GB", "H100-SXM5-80GB"},
      {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
      {"NVIDIA H200-SXM5-141GB", "H200-SXM5-141GB"},
      {"NVIDIA Blackwell GPU (B200-SXM-180GB)", "B200-SXM-180GB"},
      {"NVIDIA A100 - PCIe - 80 GB", "A100-PCIe-80GB"},
      {"H100 NVL Tensor Core GPU (PCIe)", "H100-NVL-94GB"},
      {"NVIDIA RTX A5000", "RTX-A5000"},
      {"NVIDIA GeForce RTX 4090", "RTX-4090"},
      {"AMD Radeon RX 7900 XTX", "Radeon-RX-7900-XTX"},
      {"TPU-v5p", "TPU-v5p"},
      {"h100 sxm5 80gb", "H100-SXM5-80GB"},  // case, spaces and dashes do not matter
  };
  const Catalog c = catalog();
  for (const auto& [alias, name] : names) EXPECT_EQ(c.accelerator(name_node(alias)).name, name) << alias;
}

// The names later MLPerf rounds publish: vendor prefixes, "(R)", "Tensor Core GPU", "GPU (...)"
// wrappers, memory sizes and types, cooling.
TEST(Catalog, LaterRoundsAcceleratorNamesResolve) {
  const Catalog c = catalog();
  const std::pair<const char*, const char*> names[] = {
      {"NVIDIA Blackwell GPU (GB200)", "GB200"},
      {"AMD Instinct MI300X 192GB HBM3", "MI300X"},
      {"AMD Instinct MI325X 256GB HBM3e", "MI325X"},
      {"AMD Instinct MI325X 256GB HBM3E DLC", "MI325X"},
      {"Intel(R) Gaudi(R) 2 AI Accelerator", "Gaudi2"},
      {"NVIDIA H100-SXM-80GB", "H100-SXM5-80GB"},
      {"NVIDIA H100-PCIe-80GB", "H100-PCIe-80GB"},
      {"NVIDIA H200-NVL-141GB", "H200-NVL-141GB"},
      {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
      {"NVIDIA L40S", "L40S"},
      {"TPU-trillium", "TPU-v6e"},
      // Blackwell Ultra and CDNA 4: the memory a SKU reports does not split a kind
      {"NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "B300-SXM-270GB"},
      {"NVIDIA B300-SXM-288GB", "B300-SXM-270GB"},
      {"NVIDIA B300 SXM6 AC", "B300-SXM-270GB"},
      {"NVIDIA Blackwell GPU (GB300)", "GB300"},
      {"NVIDIA GB300 NVL72", "GB300"},
      {"AMD Instinct MI355X 288GB HBM3E", "MI355X"},
      // the SXM socket's generation, and the board or system a part sits in, say nothing of it
      {"NVIDIA H200-SXM-141GB", "H200-SXM5-141GB"},
      {"NVIDIA A100-SXM-80GB", "A100-SXM4-80GB"},
      {"NVIDIA DGX B200", "B200-SXM-180GB"},
      {"NVIDIA HGX B300", "B300-SXM-270GB"},
      {"NVIDIA Blackwell GPU (B200)", "B200-SXM-180GB"},
      {"NVIDIA Blackwell Ultra GPU (B300)", "B300-SXM-270GB"},
      {"Google TPU v5e", "TPU-v5e"},
      // and v4.1's still do
      {"NVIDIA Blackwell GPU (B200-SXM-180GB)", "B200-SXM-180GB"},
      {"H100 NVL Tensor Core GPU (PCIe)", "H100-NVL-94GB"},
      {"TPU-v5p", "TPU-v5p"},
  };
  for (const auto& [published, kind] : names) {
    const auto a = c.find_accelerator(published);
    ASSERT_TRUE(a.has_value()) << published;
    EXPECT_EQ(a->name, kind) << published;
  }
  // Memory sizes tell kinds apart where they must: a PCIe H100 is not the 94 GB NVL card.
  EXPECT_EQ(canonical_accelerator_name("NVIDIA A100 - PCIe - 80 GB"), "a100pcie80gb");
  EXPECT_EQ(canonical_accelerator_name("AMD Instinct MI300X 192GB HBM3", false), "mi300x");
  EXPECT_EQ(canonical_accelerator_name("NVIDIA HGX H200-SXM5-141GB"), "h200sxm141gb");
  EXPECT_FALSE(c.find_accelerator("NVIDIA Imaginary X1").has_value());
  EXPECT_EQ(unknown_accelerator_message("NVIDIA H300-SXM-80GB", {"H100-SXM5-80GB", "B200-SXM-180GB", "L40S"}),
            "unknown accelerator 'NVIDIA H300-SXM-80GB' (closest kinds: H100-SXM5-80GB, B200-SXM-180GB, L40S); add it "
            "to the aliases of its file in models/hardware, or add a file for it there");
}

TEST(Catalog, HardwareFilesCarryTheReferenceFigures) {
  const Accelerator h100 = catalog().accelerator(name_node("H100-SXM5-80GB"));
  EXPECT_DOUBLE_EQ(h100.peak.at("bf16").value(), 989.4e12);  // GK, STAS: dense BF16
  EXPECT_DOUBLE_EQ(h100.peak.at("fp8").value(), 1978.9e12);
  EXPECT_DOUBLE_EQ(h100.memory_capacity.value(), 81559.0 * 1024 * 1024);  // SYS: what the driver reports
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth.value(), 3.35e12);
  EXPECT_DOUBLE_EQ(h100.scale_up_bandwidth.value(), 450e9);  // 900 GB/s bidirectional
  EXPECT_EQ(h100.typical_accelerators_per_node, 8);
  EXPECT_DOUBLE_EQ(h100.typical_nic_bandwidth.value(), 50e9);  // 400 Gb/s
  EXPECT_EQ(catalog().accelerators().size(), 26u);
}

// Blackwell Ultra doubles the special-function units' exponentials a clock (NVIDIA's "Inside
// Blackwell Ultra" and "Making Softmax More Efficient" blogs). The files give rates; per SM and
// clock, at the clock where the SMs give the bf16 peak at 8,192 FLOPs a clock each
// (clock = peak / (SMs x 8192), so exponentials a clock an SM = rate x 8192 / peak):
//   B200  4.39e12 x 8192 / 2.25e15 = 15.98;  GB200 4.88e12 x 8192 / 2.5e15 = 15.99
//   B300  8.79e12 x 8192 / 2.25e15 = 32.00;  GB300 9.77e12 x 8192 / 2.5e15 = 32.02
TEST(Catalog, BlackwellUltraExponentiatesTwiceWhatBlackwellDoesAClock) {
  const Catalog c = catalog();
  const auto per_sm_clock = [&](const char* kind) {
    const Accelerator a = c.accelerator(name_node(kind));
    return a.special_function_rate.value() * 8192 / a.peak.at("bf16").value();
  };
  EXPECT_NEAR(per_sm_clock("B200-SXM-180GB"), 16, 0.05);
  EXPECT_NEAR(per_sm_clock("GB200"), 16, 0.05);
  EXPECT_NEAR(per_sm_clock("B300-SXM-270GB"), 32, 0.05);
  EXPECT_NEAR(per_sm_clock("GB300"), 32, 0.05);
  // The rest of a B300 is a B200 with 160 SMs, more memory (288 GB, of it usable as B200's 180 of
  // 192: 288 x 180 / 192 = 270 GB) and an 800 Gb/s NIC a GPU.
  const Accelerator b300 = c.accelerator(name_node("B300-SXM-270GB"));
  const Accelerator b200 = c.accelerator(name_node("B200-SXM-180GB"));
  EXPECT_EQ(b300.compute.parallel_units, 160);
  EXPECT_DOUBLE_EQ(b300.peak.at("bf16").value(), b200.peak.at("bf16").value());
  EXPECT_DOUBLE_EQ(b300.memory_capacity.value(), 270e9);
  EXPECT_DOUBLE_EQ(b300.typical_nic_bandwidth.value(), 100e9);  // 800 Gb/s
  // The MI355X's FP8 rate is 256 CUs x 8,192 FLOPs a clock x 2.4 GHz = 5,033 TFLOP/s.
  const Accelerator mi355x = c.accelerator(name_node("MI355X"));
  EXPECT_NEAR(mi355x.peak.at("fp8").value(), 256 * 8192 * 2.4e9, 0.2e12);
}

// A benchmark goes by its catalog name, its MLPerf name and the names its results use: RetinaNet's
// logs and results folders say "ssd" (submission_benchmark), the results table "retinanet".
TEST(Catalog, BenchmarksResolveByEveryPublishedName) {
  const Catalog c = catalog();
  for (const char* name : {"retinanet", "ssd", "SSD"}) {
    const auto w = c.find_workload(name);
    ASSERT_TRUE(w.has_value()) << name;
    EXPECT_EQ(w->name, "retinanet") << name;
  }
  EXPECT_EQ(c.workload(name_node("ssd")).name, "retinanet");
  const auto sd = c.find_workload("stable-diffusion");  // separators do not count
  ASSERT_TRUE(sd.has_value());
  EXPECT_EQ(sd->name, "stable_diffusion");
  EXPECT_FALSE(c.find_workload("resnet").has_value());
}

TEST(Catalog, UnknownNamesGetADidYouMean) {
  try {
    catalog().accelerator(name_node("H100-SXM5-80G"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.message(), "unknown accelerator 'H100-SXM5-80G'");
    EXPECT_NE(e.hint().find("did you mean 'H100-SXM5-80GB'?"), std::string::npos) << e.hint();
  }
}

// The workload files reproduce the parameter and FLOP counts of the published architectures (written out in the workload files).
TEST(Catalog, WorkloadTotalsMatchTheReference) {
  const Catalog c = catalog();
  const Workload bert = c.workload(name_node("bert"));
  EXPECT_EQ(bert.total_parameters(), 336'226'108);
  EXPECT_NEAR(bert.forward_flops_per_sample().value(), 164.7e9, 0.1e9);
  EXPECT_NEAR((bert.forward_flops_per_sample() + bert.backward_flops_per_sample()).value(), 494e9, 1e9);

  const Workload llama = c.workload(name_node("llama2_70b_lora"));
  // The base model's 68,976,648,192 and the adapters' 80 x 557,056 = 44,564,480.
  EXPECT_EQ(llama.total_parameters(), 68'976'648'192 + 44'564'480);
  EXPECT_EQ(llama.trainable_parameters(), 44'564'480);
  EXPECT_NEAR((llama.forward_flops_per_sample() + llama.backward_flops_per_sample()).value(), 2.52e15, 0.01e15);
  EXPECT_DOUBLE_EQ(llama.gradient_bytes().value(), 2.0 * 44'564'480);

  const Workload retina = c.workload(name_node("retinanet"));
  EXPECT_EQ(retina.total_parameters(), 37'060'652);
  EXPECT_EQ(retina.trainable_parameters(), 36'849'004);
  EXPECT_NEAR((retina.forward_flops_per_sample() + retina.backward_flops_per_sample()).value(), 1169e9, 1e9);

  const Workload sd = c.workload(name_node("stable_diffusion"));
  EXPECT_EQ(sd.trainable_parameters(), 865'910'724);
  EXPECT_NEAR(sd.forward_flops_per_sample().value(), 804e9, 1e9);
  EXPECT_NEAR((sd.forward_flops_per_sample() + sd.backward_flops_per_sample()).value(), 2413e9, 1e9);
}

TEST(Catalog, LayerRepeatsAreBounded) {
  // The step graph holds every layer instance: 200,000 repeats of BERT's encoder is refused with
  // the limit, at the line and key, not built.
  std::string yaml = config::read_text_file(std::string(SP_SOURCE_DIR) + "/models/workloads/bert.yaml");
  const std::size_t at = yaml.find("repeat: 24");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, 10, "repeat: 200000");
  try {
    parse_workload(config::load_string(yaml, "bert.yaml"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(".repeat: at most 100000 repeats of a layer group, got 200000"), std::string::npos)
        << e.what();
  }
}

TEST(Catalog, SizesAWorkloadFileCannotMakeNegativeAreRefusedAtTheirKey) {
  // A negative optimizer state once ran the step's events backwards (an internal error); memory
  // and traffic per parameter or token are sizes of 0 or more.
  const std::string bert = config::read_text_file(std::string(SP_SOURCE_DIR) + "/models/workloads/bert.yaml");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"optimizer_bytes_per_trainable_parameter: \"12 B\"", "memory.optimizer_bytes_per_trainable_parameter"},
      {"optimizer_traffic_per_parameter: \"32 B\"", "optimizer_traffic_per_parameter"},
      {"activations: \"1.6 MB\"", "layers[0].activations"},
  };
  for (const auto& [line, key] : cases) {
    std::string yaml = bert;
    const std::size_t at = yaml.find(line);
    ASSERT_NE(at, std::string::npos) << line;
    const std::size_t quote = yaml.find('"', at);
    yaml.insert(quote + 1, "-");
    try {
      parse_workload(config::load_string(yaml, "bert.yaml"));
      ADD_FAILURE() << "no error for " << key;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(": " + key + ": must be a size of 0 or more, got \"-"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Catalog, ShippedAttentionsRunTheirSoftmaxAsTheirV41ImplementationsDo) {
  // Llama2's TransformerEngine runs cuDNN's fused attention, which exponentiates beside its
  // products; BERT's apex fused MHA and Stable Diffusion's flash-attn 2 do it in between. The
  // units' rate is the H100 SXM5's 16 a clock x 132 SMs x 1.83 GHz on both GH100 parts.
  const Catalog c = catalog();
  const auto softmax_overlapped = [&](const char* workload) {
    const std::optional<Workload> w = c.find_workload(workload);
    for (const LayerGroup& l : w->layers) {
      for (const Op& o : l.ops) {
        if (o.kind == OpKind::attention) return o.softmax_overlapped;
      }
    }
    ADD_FAILURE() << workload << " has no attention";
    return false;
  };
  EXPECT_TRUE(softmax_overlapped("llama2_70b_lora"));
  EXPECT_FALSE(softmax_overlapped("bert"));
  EXPECT_FALSE(softmax_overlapped("stable_diffusion"));
  for (const char* kind : {"H100-SXM5-80GB", "H200-SXM5-141GB"}) {
    EXPECT_NEAR(c.find_accelerator(kind)->special_function_rate.value(), 16.0 * 132 * 1.83e9, 0.01e12) << kind;
  }
}

// A models/ folder of its own in /tmp: the shipped hardware files, no workload yet.
std::filesystem::path catalog_with_hardware_only(const std::string& test) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("sp_catalog_" + test + "_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "workloads");
  std::filesystem::copy(std::filesystem::path(SP_SOURCE_DIR) / "models/hardware", root / "hardware",
                        std::filesystem::copy_options::recursive);
  return root;
}

TEST(Catalog, APerFamilySettingMustNameAHardwareFilesFamily) {
  // Llama's attention keeps FP8 at CP2 on "blackwell" (the B200 and GB200 files' family); a
  // misspelt family would never match and silently change nothing, so the catalog refuses it at
  // its line and key, with the families the hardware files name.
  const std::filesystem::path root = catalog_with_hardware_only("family");
  std::string yaml = config::read_text_file(std::string(SP_SOURCE_DIR) + "/models/workloads/llama2_70b_lora.yaml");
  const std::size_t at = yaml.find("blackwell: fp8}");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, 9, "blackwel");
  std::ofstream((root / "workloads/llama2_70b_lora.yaml").string()) << yaml;
  try {
    Catalog(root).workloads();
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.message(), "no hardware file has the architecture family 'blackwel'");
    EXPECT_NE(e.key().find("context_parallel_precision.blackwel"), std::string::npos) << e.key();
    EXPECT_NE(e.hint().find("blackwell"), std::string::npos) << e.hint();
    EXPECT_GT(e.where().line, 0);
  }
  std::filesystem::remove_all(root);
}

TEST(Catalog, TwoFilesOfOneNameAreRefusedNotOneIgnored) {
  // A copy of bert.yaml beside it (bert2.yaml, still `name: bert`): list workloads showed bert
  // twice and scenarios took the first, silently.
  const std::filesystem::path root = catalog_with_hardware_only("twice");
  const std::filesystem::path bert = std::filesystem::path(SP_SOURCE_DIR) / "models/workloads/bert.yaml";
  std::filesystem::copy(bert, root / "workloads/bert.yaml");
  std::filesystem::copy(bert, root / "workloads/bert2.yaml");
  try {
    Catalog(root).workloads();
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.message(), "workload 'bert' is also the name of " + (root / "workloads/bert.yaml").string());
    EXPECT_NE(e.where().file.find("bert2.yaml"), std::string::npos) << e.where().file;
  }
  std::filesystem::remove_all(root);
}

}  // namespace sp::models
