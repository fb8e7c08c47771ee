// Sweeps: expansion order and ids, errors located in the sweep file, a failing point that does
// not stop the others, the same bytes for 1, 2 and 3 MPI ranks, and a run killed with SIGKILL
// part-way then resumed equal to an uninterrupted one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "shell.hpp"
#include "sim/core/error.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace {

namespace fs = std::filesystem;
using sp::testing::shell;
using sp::testing::slurp;

const std::string kSweeps = std::string(SP_TEST_DATA) + "/sweeps/";

sp::testing::RunResult sweep(const std::string& args, int ranks = 0) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
  // Under the sanitizer build, Open MPI's own start-up allocations (in MCA components unloaded by
  // exit) read as leaks; the ranks' leak check is off, the serial runs keep it.
  const std::string launcher =
      ranks > 0 ? "env LSAN_OPTIONS=detect_leaks=0 " + std::string(SP_MPIEXEC) + " -np " + std::to_string(ranks) + " " : "";
  return shell(launcher + SP_CLI + " sweep " + args);
}

fs::path fresh(const std::string& name) { return sp::testing::fresh_dir("sweep_test", name); }

// Twelve points with one bad one: BERT at [8, 64, 512], [12] (not whole nodes: this point fails
// alone) and [8, 16, 32, 64] accelerators, times four seeds, each with `samples` Monte Carlo
// replicates. The tests that kill a sweep part-way need points slow enough that a kill lands
// before the end: SP_SLOW_SAMPLES, about 5 s serially on a 2-core machine in every build (100,000
// replicates, a fifth of them where the sanitizers slow the build five-fold; 30,000 in the plain
// build let rank 0 finish alone before Open MPI ended the job). The others run them quickly.
std::string points_file(int samples) {
  const fs::path dir = fresh("points_" + std::to_string(samples)), file = dir / "points.yaml";
  fs::create_directories(dir);
  std::ofstream(file) << "name: points\nbase: " << SP_SOURCE_DIR << "/scenarios/bert.yaml\naxes:\n"
                      << "  - points:\n      - {accelerators: [8, 64, 512]}\n      - {accelerators: [12]}\n"
                      << "      - {accelerators: [8, 16, 32, 64]}\n  - grid: {seed: [1, 2, 3, 4]}\n"
                      << "  - points:\n      - {samples: " << samples << "}\n";
  return file.string();
}
const std::string& slow_points() {
  static const std::string file = points_file(SP_SLOW_SAMPLES);
  return file;
}
const std::string& quick_points() {
  static const std::string file = points_file(500);
  return file;
}

}  // namespace

TEST(Sweep, ExpansionOrderAndIds) {
  // grid {seed: [1, 2], samples: [0, 10]} x zip of 3 x repeat 2 = 4 x 3 x 2 = 24 points; the
  // first axis varies slowest, and inside the grid seed before samples.
  const sp::SweepSpec s = sp::load_sweep(kSweeps + "order.yaml");
  ASSERT_EQ(s.points.size(), 24u);
  EXPECT_EQ(s.keys, (std::vector<std::string>{"seed", "samples", "label", "accelerators"}));
  const auto v = [&](int id, const std::string& key) { return s.value(s.points[static_cast<std::size_t>(id)], key); };
  EXPECT_EQ(s.points[7].id, 7);
  // id = ((grid x 3) + zip) x 2 + repeat: 7 = ((1 x 3) + 0) x 2 + 1, so grid 1 (seed 1,
  // samples 10), zip 0 (a, [8]), repeat 1 (seed 2, which wins: later axes override).
  EXPECT_EQ(v(7, "samples"), "10");
  EXPECT_EQ(v(7, "label"), "a");
  EXPECT_EQ(v(7, "accelerators"), "[8]");
  EXPECT_EQ(v(7, "seed"), "2");
  EXPECT_EQ(v(23, "samples"), "10");  // the last: grid 3 (seed 2, samples 10), zip 2, repeat 1
  EXPECT_EQ(v(23, "label"), "c");
  EXPECT_EQ(s.overrides_of(s.points[7]).size(), 4u);  // seed, samples, accelerators, seed: label dropped
}

TEST(Sweep, ErrorsAreLocatedInTheSweepFile) {
  try {
    sp::load_sweep(kSweeps + "bad_axis.yaml");
    FAIL() << "no error";
  } catch (const sp::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad_axis.yaml:4:34: axes[0].zip.samples: has 3 values where the first "
                                         "list has 2"),
              std::string::npos)
        << e.what();
  }
  const fs::path out = fresh("bad");
  const auto r = sweep(kSweeps + "bad_axis.yaml --out " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(fs::exists(out));  // nothing written for a bad sweep file
}

TEST(Sweep, AKeyPathTheBaseHasNoPlaceForIsTheSweepFilesErrorAtItsAxis) {
  // nic_bandwith (sic) fails every point alike: refused where it is written, nothing run or
  // written (it was a failed row per point, each citing a --set nobody typed, and exit 1).
  try {
    sp::load_sweep(kSweeps + "misspelt_key.yaml");
    FAIL() << "no error";
  } catch (const sp::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("misspelt_key.yaml:6:43: axes[1].points[0].platform.scale_out.nic_bandwith: key path "
                                         "'platform.scale_out.nic_bandwith' does not fit the base scenario"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("platform.scale_out.nic_bandwith: unknown key (did you mean 'nic_bandwidth'?"),
              std::string::npos)
        << e.what();
  }
  // A key two axes set repeats points (the later axis's value wins at each): refused at the second.
  try {
    sp::load_sweep(kSweeps + "key_twice.yaml");
    ADD_FAILURE() << "no error";
  } catch (const sp::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("key_twice.yaml:5:34: axes[1].zip.seed: key path 'seed' is set by axes[0] too"),
              std::string::npos)
        << e.what();
  }
  const fs::path out = fresh("misspelt");
  EXPECT_EQ(sweep(kSweeps + "misspelt_key.yaml --out " + out.string()).status, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST(Sweep, APriceIsAWholeNumberAndUsd) {
  // std::stod read "2.5x USD" as 2.5 (found by a hostile-input review).
  const fs::path dir = fresh("price");
  fs::create_directories(dir);
  for (const std::string price : {"2.5x USD", "inf USD", "0 USD", "USD"}) {
    std::ofstream(dir / "p.yaml") << "name: p\nbase: " << SP_SOURCE_DIR << "/scenarios/bert.yaml\naxes:\n  - repeat: 1\n"
                                  << "report: {gpu_hour: \"" << price << "\"}\n";
    try {
      sp::load_sweep((dir / "p.yaml").string());
      ADD_FAILURE() << price << " accepted";
    } catch (const sp::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("report.gpu_hour: "), std::string::npos) << e.what();
    }
  }
  std::ofstream(dir / "p.yaml") << "name: p\nbase: " << SP_SOURCE_DIR << "/scenarios/bert.yaml\naxes:\n  - repeat: 1\n"
                                << "report: {gpu_hour: \"2.5 USD\"}\n";
  EXPECT_EQ(sp::load_sweep((dir / "p.yaml").string()).gpu_hour_usd, 2.5);
}

TEST(Sweep, AFileNameTheSystemRefusesIsABadBaseNotACrash) {
  // Found by fuzz_sweep (tests/fuzz): a `base` longer than a file name may be ended the program
  // with an uncaught filesystem_error; it is the sweep file's error now.
  const fs::path dir = fresh("long_base");
  fs::create_directories(dir);
  { std::ofstream(dir / "s.yaml") << "name: s\nbase: " << std::string(300, 'G') << ".yaml\naxes: []\n"; }
  try {
    sp::load_sweep((dir / "s.yaml").string());
    FAIL() << "no error";
  } catch (const sp::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:2:7: base: no such scenario: "), std::string::npos) << e.what();
  }
}

TEST(Sweep, ABaseThatIsNoScenarioFileIsTheSweepsErrorNotEveryPointsFailure) {
  // A directory, a device and an empty file would each fail every point alike (exit 1, a table of
  // invalid rows and nothing said): the sweep file's error at its key, found by a hostile-input
  // review.
  const fs::path dir = fresh("base_not_a_file");
  fs::create_directories(dir / "folder");
  { std::ofstream(dir / "empty.yaml"); }
  const auto message = [&](const std::string& base) {
    { std::ofstream(dir / "s.yaml") << "name: s\nbase: " << base << "\naxes: []\n"; }
    try {
      sp::load_sweep((dir / "s.yaml").string());
    } catch (const sp::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("folder").find("s.yaml:2:7: base: a scenario that is not a regular file: "), std::string::npos);
  EXPECT_NE(message("/dev/zero").find("s.yaml:2:7: base: a scenario that is not a regular file: /dev/zero"), std::string::npos);
  EXPECT_NE(message("empty.yaml").find("s.yaml:2:7: base: an empty scenario: "), std::string::npos);
}

TEST(Sweep, TooManyPointsAreRefusedWithTheirCountBeforeAnythingIsWritten) {
  // A grid of 3 x 4 values and a repeat of 5 expand to 60 points; the file allows 50.
  const fs::path out = fresh("too_many");
  const auto r = sweep(kSweeps + "too_many.yaml --out " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("too_many.yaml:6:3: axes: expand to 60 points, more than max_points (50)"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Sweep, AGridIsCountedByMultiplicationBeforeItIsExpanded) {
  // Seven keys of ten values each in one grid: 10^7 points, refused with its count (the default
  // max_points is 10^6) before any of them exists; it used to expand them all first (100 s).
  const fs::path dir = fresh("huge_grid");
  fs::create_directories(dir);
  std::string ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
  std::ofstream(dir / "huge.yaml") << "name: huge\nbase: " << SP_SOURCE_DIR << "/scenarios/bert.yaml\naxes:\n  - grid: {"
                                   << "a: " << ten << ", b: " << ten << ", c: " << ten << ", d: " << ten << ", e: " << ten
                                   << ", f: " << ten << ", g: " << ten << "}\n";
  const auto r = sweep((dir / "huge.yaml").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("huge.yaml:4:3: axes: expand to 10000000 points, more than max_points (1000000)"),
            std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Sweep, SameBytesForOneTwoAndThreeRanksAndAFailingPointDoesNotStopThem) {
  const fs::path serial = fresh("serial");
  // Exit status 1: every point ran and has its row, but some failed.
  const auto r = sweep(quick_points() + " -q --out " + serial.string());
  ASSERT_EQ(r.status, 1) << r.output;
  const std::string csv = slurp(serial / "sweep.csv");
  // 12 points: 8 of 3 or 4 counts, and the 4 points of 12 accelerators, one row each.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 3 + 4 * 1 + 4 * 4);
  EXPECT_NE(csv.find("\n4,[12],1,500,"), std::string::npos);
  EXPECT_NE(csv.find(",invalid,\"--set accelerators=[12]: accelerators[0]: 12 accelerators is not a whole number"),
            std::string::npos);
  for (int ranks : {1, 2, 3}) {
    const fs::path dir = fresh("mpi" + std::to_string(ranks));
    const auto m = sweep(quick_points() + " -q --out " + dir.string(), ranks);
    ASSERT_EQ(m.status, 1) << m.output;
    EXPECT_EQ(slurp(dir / "sweep.csv"), csv) << ranks << " ranks";
    EXPECT_EQ(slurp(dir / "manifest.yaml"), slurp(serial / "manifest.yaml")) << ranks << " ranks";
    EXPECT_EQ(slurp(dir / "sweep.h5"), slurp(serial / "sweep.h5")) << ranks << " ranks";
  }
}

TEST(Sweep, KilledPartWayAndResumedEqualsUninterrupted) {
  const fs::path whole = fresh("whole"), killed = fresh("killed");
  ASSERT_EQ(sweep(slow_points() + " -q --out " + whole.string()).status, 1);  // with its failing points
  // Start it, wait until 3 points are recorded, SIGKILL it.
  const std::string dir = killed.string();
  const auto k = shell("sh -c '" + std::string(SP_CLI) + " sweep " + slow_points() + " -q --out " + dir +
                       " & p=$!; while [ \"$(cut -d\" \" -f1 " + dir + "/sweep.progress 2>/dev/null || echo 0)\" -lt 3 ]; "
                       "do sleep 0.02; done; kill -9 $p; wait $p; exit 0'");
  ASSERT_EQ(k.status, 0) << k.output;
  const std::string partial = slurp(killed / "sweep.csv");
  ASSERT_LT(partial.size(), slurp(whole / "sweep.csv").size()) << "it finished before the kill";
  const auto r = sweep(slow_points() + " -q --resume --out " + dir);
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(slurp(killed / "sweep.csv"), slurp(whole / "sweep.csv"));
  EXPECT_EQ(slurp(killed / "sweep.h5"), slurp(whole / "sweep.h5"));
  EXPECT_GT(slurp(whole / "sweep.h5").size(), 1000u);
  // A progress file of another sweep is refused, not overwritten.
  const auto other = sweep(kSweeps + "order.yaml -q --resume --out " + dir);
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.output.find("belongs to another sweep file"), std::string::npos) << other.output;
}

TEST(Sweep, AKilledWorkerRankStopsTheSweepAndResumeCompletesIt) {
  // Under mpirun with 2 ranks, SIGKILL the worker (rank 1) as it starts: Open MPI
  // ends the job; every point recorded is on disk, and --resume (here serial) finishes the sweep
  // to the bytes of an uninterrupted run.
  const fs::path whole = fresh("whole_w"), killed = fresh("killed_w");
  ASSERT_EQ(sweep(slow_points() + " -q --out " + whole.string()).status, 1);
  const std::string dir = killed.string();
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
  std::string script = R"SH(LSAN_OPTIONS=detect_leaks=0 timeout 300 MPIEXEC -np 2 CLI sweep POINTS -q --out DIR & m=$!
worker=""
while [ -z "$worker" ] && kill -0 $m 2>/dev/null; do
  for p in $(pgrep -f "sweep .*--out DIR$"); do
    # One grep over the NUL-separated environment: an echo per variable (xargs -n1) spawned
    # hundreds of processes a pass beside two busy ranks, and found the worker only as it ended.
    grep -qzx OMPI_COMM_WORLD_RANK=1 /proc/$p/environ 2>/dev/null && worker=$p
  done
  sleep 0.01
done
[ -n "$worker" ] || { echo "no worker rank seen while the job ran"; wait $m; echo mpirun $?; exit 1; }
sleep 0.05; kill -9 $worker && echo killed
wait $m; echo mpirun $?
)SH";
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"MPIEXEC", SP_MPIEXEC}, {"CLI", SP_CLI},
                                 {"POINTS", slow_points()}, {"DIR", dir}}) {
    for (std::size_t at = script.find(from); at != std::string::npos; at = script.find(from, at + to.size())) {
      script.replace(at, from.size(), to);
    }
  }
  {
    std::ofstream(killed.string() + ".sh") << script;
  }
  const auto k = shell("bash " + killed.string() + ".sh");
  ASSERT_NE(k.output.find("killed"), std::string::npos) << k.output;
  EXPECT_EQ(k.output.find("mpirun 0"), std::string::npos) << k.output;  // the job failed
  const std::string partial = slurp(killed / "sweep.csv");
  ASSERT_LT(partial.size(), slurp(whole / "sweep.csv").size()) << "it finished before the kill\n" << k.output;
  const auto r = sweep(slow_points() + " -q --resume --out " + dir);
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(slurp(killed / "sweep.csv"), slurp(whole / "sweep.csv"));
  EXPECT_EQ(slurp(killed / "sweep.h5"), slurp(whole / "sweep.h5"));
}

TEST(Sweep, AFullDiskEndsWithTheReasonAndResumeCompletesIt) {
  // A file-size limit (RLIMIT_FSIZE; scalepoint ignores SIGXFSZ, so write() reports EFBIG) stands
  // in for a full disk: the sweep stops with the system's reason (exit 1), what it recorded is
  // intact, and --resume without the limit gives the uninterrupted bytes.
  const fs::path whole = fresh("whole_f"), full = fresh("full");
  ASSERT_EQ(sweep(quick_points() + " -q --out " + whole.string()).status, 1);
  const std::size_t size = slurp(whole / "sweep.csv").size();
  const std::string blocks = std::to_string(size / 2 / 1024);  // bash counts ulimit -f in KiB
  const auto f = shell("bash -c 'ulimit -f " + blocks + "; " + SP_CLI + " sweep " + quick_points() +
                       " -q --out " + full.string() + "'");
  EXPECT_EQ(f.status, 1) << f.output;
  EXPECT_NE(f.output.find("scalepoint: error: cannot write " + full.string() + "/sweep.csv: File too large"),
            std::string::npos)
      << f.output;
  EXPECT_EQ(f.output.find("internal error"), std::string::npos) << f.output;
  const auto r = sweep(quick_points() + " -q --resume --out " + full.string());
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(slurp(full / "sweep.csv"), slurp(whole / "sweep.csv"));
  // A read-only output folder for `run`: the reason, and no partial output.
  const fs::path ro = fresh("read_only");
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  if (::geteuid() != 0) {  // root writes anywhere
    const auto w = shell(std::string(SP_CLI) + " run " + std::string(SP_SOURCE_DIR) + "/scenarios/bert.yaml -q --out " +
                         (ro / "out").string());
    EXPECT_NE(w.status, 0);
    EXPECT_NE(w.output.find("Permission denied"), std::string::npos) << w.output;
  }
  fs::permissions(ro, fs::perms::owner_all);
}

TEST(Sweep, ResumeTrustsOnlyARecordedPartThatIsAllThereAndUnchanged) {
  const fs::path dir = fresh("tamper");
  ASSERT_EQ(sweep(quick_points() + " -q --out " + dir.string()).status, 1);
  const fs::path csv = dir / "sweep.csv", progress = dir / "sweep.progress";
  const std::string whole = slurp(csv), recorded = slurp(progress);
  const auto write = [](const fs::path& f, const std::string& text) { std::ofstream(f, std::ios::binary) << text; };
  const auto resume = [&] { return sweep(quick_points() + " -q --resume --out " + dir.string()); };
  // Shorter than recorded (a copy cut short): refused, nothing padded or rerun.
  write(csv, whole.substr(0, whole.size() / 2));
  auto r = resume();
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("sweep.csv has " + std::to_string(whole.size() / 2) + " bytes, but"), std::string::npos)
      << r.output;
  EXPECT_EQ(slurp(csv), whole.substr(0, whole.size() / 2));
  EXPECT_EQ(slurp(progress), recorded);
  // A progress that claims far more than was written does not grow the file.
  write(csv, whole);
  write(progress, "12 999999999" + recorded.substr(recorded.find(' ', recorded.find(' ') + 1)));
  r = resume();
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(fs::file_size(csv), whole.size());
  // A negative byte count is damage, not 2^64 - 5 bytes (which the message used to print).
  write(progress, "12 -5" + recorded.substr(recorded.find(' ', recorded.find(' ') + 1)));
  r = resume();
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("sweep.progress belongs to another sweep file (or is damaged)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("18446744073709551611"), std::string::npos) << r.output;
  EXPECT_EQ(fs::file_size(csv), whole.size());
  // One digit changed inside the recorded rows: the checksum says so.
  write(progress, recorded);
  std::string altered = whole;
  const auto digit = altered.find_first_of("123456789", altered.find('\n') + 1);
  altered[digit] = altered[digit] == '9' ? '8' : static_cast<char>(altered[digit] + 1);
  write(csv, altered);
  r = resume();
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("sweep.csv has changed in the rows"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(csv), altered);
  // A count of points that is not what the rows hold (found by a hostile-input review: -1
  // crashed, 0 wrote every point twice): refused, the rows kept.
  write(csv, whole);
  const std::string rest = recorded.substr(recorded.find(' '));
  for (const char* count : {"-1", "0", "2", "1000"}) {
    write(progress, count + rest);
    r = resume();
    EXPECT_EQ(r.status, 2) << count << "\n" << r.output;
    EXPECT_NE(r.output.find("does not match the rows of"), std::string::npos) << r.output;
    EXPECT_EQ(slurp(csv), whole);
  }
  // Untouched, a resume of a finished sweep changes nothing.
  write(progress, recorded);
  EXPECT_EQ(resume().status, 1);  // its failing points are still failed
  EXPECT_EQ(slurp(csv), whole);
}

TEST(Sweep, ReportGivesEveryBreakEvenPerGroup) {
  const fs::path dir = fresh("report");
  // Some points fail. A failure in a run of seconds is rare: 20,000 replicates draw one at some
  // points (500 draw none), so that the report has an effective time to report on.
  ASSERT_EQ(sweep(points_file(20000) + " -q --out " + dir.string()).status, 1);
  const auto r = shell(std::string(SP_CLI) + " report " + dir.string());
  ASSERT_EQ(r.status, 0) << r.output;
  {
    // Rows that are not the finished sweep (edited, cut, or another sweep's) are refused, not
    // reported (found by a hostile-input review: negative N and energies were reported).
    const fs::path copy = fresh("report_edited");
    fs::copy(dir, copy);
    std::string rows = slurp(copy / "sweep.csv");
    rows.back() = ' ';
    std::ofstream(copy / "sweep.csv", std::ios::binary) << rows;
    const auto edited = shell(std::string(SP_CLI) + " report " + copy.string());
    EXPECT_EQ(edited.status, 2);
    EXPECT_NE(edited.output.find("sweep.csv is not the finished sweep manifest.yaml and sweep.progress record"),
              std::string::npos) << edited.output;
  }
  const std::string md = slurp(dir / "report.md");
  // 12 points, grouped by what they set besides N: here each point is its own group (seed and
  // accelerator lists differ); the failed ones have no curve and every break-even is "-".
  EXPECT_NE(md.find("| group | E' >= 0.5 | doubling < 1.1x | knee of log T | N x T^2 minimum | least energy per run |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| seed=1 | "), std::string::npos) << md;
  const std::string csv = slurp(dir / "report.csv");
  // 5 definitions (no deadline), and 4 on the effective time where failures cost anything (they do
  // at some of its points: a restart of minutes against a run of seconds).
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 12 * (5 + 4));
  EXPECT_NE(csv.find(",energy_optimal,"), std::string::npos) << csv;
  EXPECT_EQ(shell(std::string(SP_CLI) + " report " + fresh("nothing").string()).status, 2);
}

TEST(Sweep, ShippedSweepsRunAndTheCommittedResultsAreCurrent) {
  // From the source folder, as the README runs them; a model change that moves the fabrics or
  // oversubscription sweep must come with its regenerated report (results/sweeps/<name>).
  for (const std::string name : {"fabrics", "oversubscription", "bert_batch", "llama_layouts"}) {
    const fs::path dir = fresh("shipped_" + name);
    const auto r = shell("cd " + std::string(SP_SOURCE_DIR) + " && " + SP_CLI + " sweep scenarios/sweeps/" + name +
                         ".yaml -q --out " + dir.string());
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string csv = slurp(dir / "sweep.csv");
    EXPECT_EQ(csv.find(",invalid,"), std::string::npos) << name;
    EXPECT_EQ(csv.find(",error,"), std::string::npos) << name;
    if (name == "fabrics" || name == "oversubscription") {
      EXPECT_EQ(csv, slurp(std::string(SP_SOURCE_DIR) + "/results/sweeps/" + name + "/sweep.csv"))
          << "regenerate: build/scalepoint sweep scenarios/sweeps/" << name << ".yaml --out results/sweeps/" << name
          << " && build/scalepoint report results/sweeps/" << name;
      ASSERT_EQ(shell("cd " + std::string(SP_SOURCE_DIR) + " && " + SP_CLI + " report " + dir.string()).status, 0);
      EXPECT_EQ(slurp(dir / "report.csv"), slurp(std::string(SP_SOURCE_DIR) + "/results/sweeps/" + name + "/report.csv"))
          << name;
    }
    if (name == "fabrics") {
      // At 16,384 GPUs a failure costs a run of a minute a restart of ten: the report gives the
      // break-even points on the effective time too.
      EXPECT_NE(slurp(dir / "report.csv").find(",effective_efficiency,"), std::string::npos);
    }
  }
}
