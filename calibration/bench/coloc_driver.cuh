// scalepoint-coloc-bench's driver: it never opens a CUDA context itself (a forked process could not
// use one); every GPU phase is a fresh process of the same program in an internal role, started
// with fork and exec, reporting on a pipe, while the driver samples NVML every 20 ms.
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace coloc {

struct Options {
  std::string out = "coloc_bench.csv", sharing = "time_slicing";
  std::vector<int> jobs = {1, 2, 4, 8};
  std::vector<std::string> cases;  // empty: all
  double job_seconds = 0.6;
  double hold_mib = 0;  // device memory each co-location worker allocates and touches first
  bool copy_per_step = false;  // each co-location step ends with a copy to the host
  bool no_colocation = false, no_power = false, no_probe = false, no_memory = false;
};

// The loops K processes run together. A width of 0 means every SM.
struct Case {
  const char* name;
  int width;
  double kernel_us, gap_us;
  int launches;
};
constexpr Case kCases[] = {
    {"host_bound", 4, 20, 60, 10},     // a small model under an eager framework: the GPU mostly waits
    {"balanced", 16, 50, 25, 10},      // half the time on the host
    {"device_narrow", 8, 200, 5, 10},  // kernels too small to fill the GPU, little host time
    {"device_wide", 0, 200, 5, 10},    // kernels that fill it
    // Streams that never run dry (no host gap, 100 launches a step): whether a context keeps the
    // device for its time slice or hands it over at every kernel's end when others wait.
    {"queued_short", 16, 20, 0, 100},
    {"queued_long", 16, 200, 0, 100},
    // device_narrow with a step shorter, then longer, than a time slice.
    {"narrow_half_slice", 8, 200, 5, 5},
    {"narrow_two_slices", 8, 200, 5, 20},
    // Streams that run dry for a few microseconds between kernels, as an eager framework's small
    // kernels leave them (PointNet: 209 kernels, 4.8 ms of them in a 6.9 ms step): whether the device
    // hands over to a waiting context at such short idle gaps, as it does at host_bound's 60 us.
    {"short_gaps", 16, 20, 30, 100},
    {"tiny_gaps", 16, 20, 18, 100},
};

// Every name in `cases` must be a case: a typo would otherwise measure nothing.
inline void check_cases(const std::vector<std::string>& cases) {
  std::string known;
  for (const Case& c : kCases) known += std::string(known.empty() ? "" : ", ") + c.name;
  for (const std::string& name : cases) {
    if (std::none_of(std::begin(kCases), std::end(kCases), [&](const Case& c) { return name == c.name; }))
      throw gpubench::UsageError("--cases: no case '" + name + "' (valid: " + known + ")");
  }
}

// Whether an MPS control daemon is up where CUDA's clients look for it: its pipes and sockets live
// in CUDA_MPS_PIPE_DIRECTORY, /tmp/nvidia-mps by default, the control pipe named `control`
// (NVIDIA's MPS documentation, "CUDA_MPS_PIPE_DIRECTORY"). A client whose driver finds no daemon
// there runs time-sliced without a word, so the --sharing label must agree with it, or rows
// measured under one kind of sharing would be filed under the other.
inline void check_sharing(const std::string& sharing) {
  const char* env = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(env && *env ? env : "/tmp/nvidia-mps") + "/control";
  struct stat st {};
  const bool daemon = ::stat(control.c_str(), &st) == 0;
  if (sharing == "mps" && !daemon)
    throw gpubench::UsageError("--sharing mps: no MPS control daemon at " + control +
                               " (start nvidia-cuda-mps-control -d with the same CUDA_MPS_PIPE_DIRECTORY)");
  if (sharing == "time_slicing" && daemon)
    throw gpubench::UsageError("--sharing time_slicing: an MPS control daemon is up at " + control +
                               ", so the processes would share by MPS (stop it, or label the run --sharing mps)");
}

struct Child {
  pid_t pid;
  int fd;  // its stdout, non-blocking
  std::string out;
  bool running = true;
};

inline Child spawn(const char* self, const std::vector<std::string>& args) {
  std::vector<char*> argv{const_cast<char*>(self)};  // built before fork: the child only execs
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fds[1], 1);  // the duplicate does not close on exec
    execv(self, argv.data());
    _exit(127);
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return {pid, fds[0], {}, true};
}

struct Sample {
  long long t_ns;
  double energy_j, clock_mhz, utilisation;
};
inline Sample sample(const Nvml& nvml) { return {now_ns(), nvml.energy_j(), nvml.sm_clock_mhz(), nvml.gpu_utilisation()}; }

// Waits for every child while sampling the board, reading their output as it comes (a child that
// writes much must not block on a full pipe); returns each child's output. A child that fails, or
// a phase past `deadline_s`, ends all of them.
inline std::vector<std::string> await(std::vector<Child> children, const Nvml& nvml, std::vector<Sample>& samples,
                                      double deadline_s = 300) {
  const long long deadline = now_ns() + static_cast<long long>(deadline_s * 1e9);
  const auto drain = [](Child& c) {
    char buffer[4096];
    for (ssize_t n; (n = read(c.fd, buffer, sizeof buffer)) > 0;) c.out.append(buffer, static_cast<size_t>(n));
  };
  const auto stop_all = [&](const std::string& why) {
    for (Child& c : children) {
      if (c.running) kill(c.pid, SIGKILL), waitpid(c.pid, nullptr, 0);
      close(c.fd);
    }
    throw std::runtime_error(why);
  };
  for (std::size_t alive = children.size(); alive > 0;) {
    if (nvml.ok()) samples.push_back(sample(nvml));
    usleep(20000);
    if (now_ns() > deadline) stop_all("a phase ran past its " + std::to_string(deadline_s) + " s deadline");
    for (Child& c : children) {
      drain(c);
      int status = 0;
      if (!c.running || waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      c.running = false;
      --alive;
      drain(c);
      if (WIFSIGNALED(status)) stop_all("a worker process died of signal " + std::to_string(WTERMSIG(status)));
      if (WEXITSTATUS(status) != 0) stop_all("a worker process failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")");
    }
  }
  if (nvml.ok()) samples.push_back(sample(nvml));  // the last child may have ended after the last sample
  std::vector<std::string> out;
  for (Child& c : children) {
    close(c.fd);
    out.push_back(c.out);
  }
  return out;
}

struct Window {  // the board over [t0, t1]
  double energy_j = NAN, power_w = NAN, clock_mhz = NAN, utilisation = NAN;
};

inline Window measure(const std::vector<Sample>& s, long long t0, long long t1) {
  Window w;
  const auto energy_at = [&](long long t) {
    for (std::size_t i = 1; i < s.size(); ++i) {
      if (s[i].t_ns < t) continue;
      const double f = double(t - s[i - 1].t_ns) / double(s[i].t_ns - s[i - 1].t_ns);
      return s[i - 1].energy_j + std::clamp(f, 0.0, 1.0) * (s[i].energy_j - s[i - 1].energy_j);
    }
    return double(NAN);
  };
  if (s.size() < 2 || t1 <= t0) return w;
  w.energy_j = energy_at(t1) - energy_at(t0);
  w.power_w = w.energy_j / ((t1 - t0) * 1e-9);
  double clock = 0, util = 0;
  int n = 0;
  for (const Sample& x : s) {
    if (x.t_ns < t0 || x.t_ns > t1) continue;
    clock += x.clock_mhz;
    util += x.utilisation;
    ++n;
  }
  if (n > 0) w.clock_mhz = clock / n, w.utilisation = util / n;
  return w;
}

struct Report {  // one line of a child: ready, start, end (CLOCK_MONOTONIC ns) and three figures
  long long ready = 0, start = 0, end = 0;
  double a = NAN, b = NAN, c = NAN;
};
inline Report parse(const std::string& line) {
  Report r;
  std::istringstream in(line);
  std::string x, y, z;
  if (!(in >> r.ready >> r.start >> r.end >> x >> y >> z)) throw std::runtime_error("bad worker output: " + line);
  r.a = std::stod(x), r.b = std::stod(y), r.c = std::stod(z);
  return r;
}

inline std::string fmt(double v, const char* f = "%.6g") {
  if (std::isnan(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

int drive(const Options& o, const char* self) {
  Nvml nvml;
  if (!nvml.ok()) std::fprintf(stderr, "scalepoint-coloc-bench: NVML not available; no power or memory figures\n");
  std::vector<Sample> samples;
  const Child cal = spawn(self, {"--role", "calibrate"});
  std::istringstream calibration(await({cal}, nvml, samples)[0]);
  double ns_per_iteration = 0;
  int sms = 0;
  std::string device;
  std::string bus;
  calibration >> ns_per_iteration >> sms >> bus;
  std::getline(calibration >> std::ws, device);
  if (!(ns_per_iteration > 0) || sms <= 4) throw std::runtime_error("the calibration process reported nonsense");
  nvml.select(bus);  // the board CUDA's device 0 is, whatever order NVML counts in
  std::fprintf(stderr, "%s: %d SMs, %.4f ns per FMA iteration\n", device.c_str(), sms, ns_per_iteration);
  const auto iterations = [&](double us) { return std::to_string(std::max(1L, std::lround(us * 1e3 / ns_per_iteration))); };

  std::ostringstream csv;
  csv << "kind,case,sharing,jobs,width_sms,kernel_us,gap_us,launches_per_step,steps,makespan_s,job_mean_s,serial_s,"
         "speedup,energy_j,power_w,sm_clock_mhz,gpu_utilisation,latency_median_us,latency_p90_us,latency_max_us,"
         "late_jobs,achieved_tflops,device,memory_used_mib,host_cores\n";
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);  // the host threads' cores, for the model's host sharing
  // The file is rewritten whole after every row, so a failure later keeps what was measured.
  const auto save = [&] {
    const std::string tmp = o.out + ".tmp";
    std::ofstream(tmp) << csv.str();
    if (std::rename(tmp.c_str(), o.out.c_str()) != 0) throw std::runtime_error("cannot write " + o.out);
  };
  // Runs `loops` (worker argument lists) together, starting when all can have their contexts.
  long long scheduled = 0;  // the common start of the last `together`: a worker ready after it was late
  const auto together = [&](const std::vector<std::vector<std::string>>& loops, double setup_s) {
    const long long start = scheduled = now_ns() + static_cast<long long>(setup_s * 1e9);
    std::vector<Child> children;
    for (auto args : loops) {
      args.insert(args.end(), {"--role", "worker", "--start-ns", std::to_string(start)});
      children.push_back(spawn(self, args));
    }
    samples.clear();
    std::vector<Report> reports;
    for (const std::string& line : await(children, nvml, samples)) reports.push_back(parse(line));
    return reports;
  };
  const auto row = [&](const char* kind, const std::string& name, int jobs, int width, double kernel_us, double gap_us,
                       int launches, long long steps, double makespan, double job_mean, double serial,
                       const Window& w, double lat50, double lat90, double latmax, int late, double tflops = NAN,
                       double memory_mib = NAN) {
    csv << kind << ',' << name << ',' << o.sharing << ',' << jobs << ',' << width << ',' << fmt(kernel_us) << ','
        << fmt(gap_us) << ',' << launches << ',' << steps << ',' << fmt(makespan) << ',' << fmt(job_mean) << ','
        << fmt(serial) << ',' << fmt(serial / makespan, "%.4f") << ',' << fmt(w.energy_j) << ','
        << fmt(w.power_w, "%.1f") << ',' << fmt(w.clock_mhz, "%.0f") << ',' << fmt(w.utilisation, "%.3f") << ','
        << fmt(lat50) << ',' << fmt(lat90) << ',' << fmt(latmax) << ',' << late << ',' << fmt(tflops, "%.1f") << ",\"" << device << "\"," << fmt(memory_mib, "%.0f") << ',' << cores << "\n";
    save();
    std::fprintf(stderr, "%s %s K=%d: makespan %.3f s, speedup %.3f, %.0f W\n", kind, name.c_str(), jobs, makespan,
                 serial / makespan, w.power_w);
  };

  for (const Case& c : kCases) {
    if (o.no_colocation) break;
    if (!o.cases.empty() && std::find(o.cases.begin(), o.cases.end(), c.name) == o.cases.end()) continue;
    const int width = c.width == 0 ? sms : c.width;
    const long long steps = std::max(1L, std::lround(o.job_seconds * 1e6 / (c.launches * (c.kernel_us + c.gap_us))));
    const std::vector<std::string> loop = {"--width", std::to_string(width), "--iterations", iterations(c.kernel_us),
                                           "--launches", std::to_string(c.launches), "--gap-us", fmt(c.gap_us),
                                           "--steps", std::to_string(steps), "--hold-mib", fmt(o.hold_mib, "%.0f")};
    std::vector<std::string> args = loop;
    if (o.copy_per_step) args.push_back("--copy-per-step");
    // A loop run with held memory or a copy a step is another case: its name says which.
    const std::string name = std::string(c.name) + (o.hold_mib > 0 ? "_hold" + fmt(o.hold_mib, "%.0f") + "mib" : "") +
                             (o.copy_per_step ? "_copy" : "");
    double one = NAN;
    for (int k : o.jobs) {
      const auto r = together(std::vector<std::vector<std::string>>(k, args), 1.5 + 0.2 * k);
      long long t0 = r[0].start, t1 = 0;
      double sum = 0;
      int late = 0;
      for (const Report& x : r) {
        t0 = std::min(t0, x.start), t1 = std::max(t1, x.end);
        sum += (x.end - x.start) * 1e-9;
        late += x.ready > scheduled;
      }
      const double makespan = (t1 - t0) * 1e-9;
      if (k == 1) one = makespan;
      row("colocation", name, k, width, c.kernel_us, c.gap_us, c.launches, steps, makespan, sum / k, k * one,
          measure(samples, t0, t1), NAN, NAN, NAN, late);
    }
  }

  // A short kernel's round trip, alone and beside long kernels on all but four SMs.
  const std::vector<std::string> probe = {"--width", "1", "--iterations", iterations(10), "--launches", "1",
                                          "--gap-us", "2000", "--steps", "400", "--probe"};
  const std::vector<std::string> hog = {"--width", std::to_string(sms - 4), "--iterations", iterations(20000),
                                        "--launches", "1", "--gap-us", "0", "--steps", "60"};
  for (bool loaded : {false, true}) {
    if (o.no_probe) break;
    const auto r = loaded ? together({probe, hog}, 2.0) : together({probe}, 1.5);
    const Report& p = r[0];
    row("probe", loaded ? "beside_long_kernels" : "alone", loaded ? 2 : 1, 1, 10, 2000, 1, 400,
        (p.end - p.start) * 1e-9, (p.end - p.start) * 1e-9, NAN, measure(samples, p.start, p.end), p.a, p.b, p.c,
        p.ready > scheduled);
  }

  if (!o.no_power && nvml.ok()) {
    // Idle with no context at all: the driver alone, sampling.
    samples.clear();
    const long long t0 = now_ns();
    const long long t1 = t0 + 3'000'000'000LL;
    while (samples.empty() || samples.back().t_ns < t1) {
      samples.push_back(sample(nvml));
      usleep(20000);
    }
    row("power", "idle_no_context", 0, 0, 0, 0, 0, 0, 3, 3, NAN, measure(samples, t0, t1), NAN, NAN, NAN, 0);
    const auto phase = [&](const std::string& name, const std::vector<std::string>& args, int width) {
      samples.clear();
      const Report r = parse(await({spawn(self, args)}, nvml, samples)[0]);
      const double s = (r.end - r.start) * 1e-9;
      row("power", name, width > 0 ? 1 : 0, width, 0, 0, 0, 0, s, s, NAN, measure(samples, r.start, r.end), NAN,
          NAN, NAN, 0, r.a);
    };
    phase("idle_context", {"--role", "hold", "--seconds", "3"}, 0);
    for (int w : {1, 8, 33, 66, sms}) {
      phase("fma_" + std::to_string(w) + "_sms",
            {"--role", "worker", "--width", std::to_string(w), "--iterations", iterations(1000), "--launches", "100",
             "--gap-us", "0", "--steps", "30", "--start-ns", "0"},
            w);
    }
    for (const char* n : {"2048", "4096", "8192"})
      phase(std::string("gemm_bf16_") + n, {"--role", "gemm", "--seconds", "4", "--gemm-size", n}, sms);
  }
  if (!o.no_memory && nvml.ok()) {
    // K processes each holding a bare context (lazy module loading, CUDA's default since 11.7),
    // read while all of them are alive; the per-context cost is the slope in K.
    for (int k : {0, 1, 2, 4, 8}) {
      std::vector<Child> holders;
      for (int i = 0; i < k; ++i) holders.push_back(spawn(self, {"--role", "hold", "--seconds", "5"}));
      usleep(3500000);
      const double used = nvml.used_memory_mib();
      samples.clear();
      await(holders, nvml, samples);
      row("memory", "bare_context", k, 0, 0, 0, 0, 0, 0, 0, NAN, Window{}, NAN, NAN, NAN, 0, NAN, used);
    }
  }
  save();
  return 0;
}

}  // namespace coloc
