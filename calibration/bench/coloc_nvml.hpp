// The board's energy counter, SM clock, utilisation and memory in use through NVML, opened at run time
// (libnvidia-ml ships with the driver, not the toolkit, and has no header on a build machine
// without one). The seven entry points are NVML's documented C API
// (https://docs.nvidia.com/deploy/nvml-api/): an nvmlReturn_t of 0 is success, a device is an
// opaque handle, energy is in mJ since the driver loaded (Volta and later).
#pragma once

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace coloc {

class Nvml {
 public:
  Nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib_) return;
    const auto sym = [&](const char* name) { return dlsym(lib_, name); };
    auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
    auto handle = reinterpret_cast<int (*)(unsigned, void**)>(sym("nvmlDeviceGetHandleByIndex_v2"));
    energy_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetTotalEnergyConsumption"));
    clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
    utilisation_ = reinterpret_cast<int (*)(void*, unsigned*)>(sym("nvmlDeviceGetUtilizationRates"));
    memory_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetMemoryInfo"));
    by_bus_ = reinterpret_cast<int (*)(const char*, void**)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    ok_ = init && handle && energy_ && clock_ && utilisation_ && memory_ && init() == 0 &&
          handle(0, &device_) == 0;
  }
  bool ok() const { return ok_; }
  /// The board at that PCI bus id ("0000:65:00.0", as cudaDeviceGetPCIBusId writes it); NVML's
  /// index 0 need not be CUDA's device 0. Without the id or the call, nothing is measured.
  void select(const std::string& bus) {
    ok_ = ok_ && by_bus_ && by_bus_(bus.c_str(), &device_) == 0;
    if (!ok_) std::fprintf(stderr, "scalepoint-coloc-bench: NVML has no board at %s; no power or memory figures\n", bus.c_str());
  }
  double energy_j() const {
    unsigned long long mj = 0;
    return ok_ && energy_(device_, &mj) == 0 ? mj * 1e-3 : NAN;
  }
  double sm_clock_mhz() const {
    unsigned mhz = 0;
    return ok_ && clock_(device_, 1 /* NVML_CLOCK_SM */, &mhz) == 0 ? double(mhz) : NAN;
  }
  double used_memory_mib() const {  // nvmlMemory_t {total, free, used}, bytes
    unsigned long long m[3] = {0, 0, 0};
    return ok_ && memory_(device_, m) == 0 ? m[2] / 1048576.0 : NAN;
  }
  double gpu_utilisation() const {  // nvmlUtilization_t {gpu, memory}: percent of the last sample period
    unsigned u[2] = {0, 0};
    return ok_ && utilisation_(device_, u) == 0 ? u[0] * 1e-2 : NAN;
  }

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  bool ok_ = false;
  int (*energy_)(void*, unsigned long long*) = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
  int (*utilisation_)(void*, unsigned*) = nullptr;
  int (*memory_)(void*, unsigned long long*) = nullptr;
  int (*by_bus_)(const char*, void**) = nullptr;
};

}  // namespace coloc
