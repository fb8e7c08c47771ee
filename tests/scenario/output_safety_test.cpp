// Outputs that cannot be redirected or half-written: never through a planted link, never into the
// root or a system folder, all or nothing under a file-size limit (no crash at exit, no cut
// file), and one writer per folder.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <H5Cpp.h>

#include "shell.hpp"
#include "sim/output/manifest.hpp"

namespace {

namespace fs = std::filesystem;
using sp::testing::RunResult;
using sp::testing::slurp;

RunResult run(const std::string& args) { return sp::testing::cli(args); }
fs::path fresh(const std::string& name) { return sp::testing::fresh_dir("output_test", name); }
std::string scenario(const std::string& name) { return sp::testing::scenario_file(name); }

bool has_gnuplot() { return sp::testing::shell("command -v gnuplot").status == 0; }

}  // namespace

TEST(OutputSafety, AnOutputIsNeverWrittenThroughALinkPlantedInItsPlace) {
  const fs::path base = fresh("link");
  fs::create_directories(base / "run");
  fs::create_directories(base / "sweep");
  const fs::path victim = base / "victim.txt";
  std::ofstream(victim) << "victim\n";
  fs::create_symlink(victim, base / "run" / "summary.csv");
  fs::create_symlink(victim, base / "sweep" / "sweep.csv");
  const RunResult r = run("run " + scenario("bert") + " -q --out " + (base / "run").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("summary.csv is a symbolic link"), std::string::npos) << r.output;
  const RunResult s = run("sweep " + std::string(SP_SOURCE_DIR) + "/scenarios/sweeps/bert_batch.yaml -q --out " +
                          (base / "sweep").string());
  EXPECT_EQ(s.status, 2) << s.output;
  EXPECT_NE(s.output.find("sweep.csv is a symbolic link"), std::string::npos) << s.output;
  EXPECT_EQ(slurp(victim), "victim\n");
  EXPECT_FALSE(fs::exists(base / "sweep" / "sweep.progress"));
}

TEST(OutputSafety, ARunIntoAnEarlierRunsFolderRemovesTheFilesOnlyItListed) {
  // N = 8 and 16, then N = 8 alone into the same folder: the second manifest lists no N = 16
  // timelines, so the first's are removed (they stayed, beside a summary without their N); a file
  // of the user's, which no manifest lists, stays.
  const fs::path dir = fs::temp_directory_path() / ("sp_stale_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ASSERT_EQ(run("run " + scenario("bert") + " -q --samples 0 --set accelerators=[8,16] --out " + dir.string()).status, 0);
  ASSERT_TRUE(fs::exists(dir / "timeline_N16.json"));
  std::ofstream(dir / "notes.txt") << "mine\n";
  ASSERT_EQ(run("run " + scenario("bert") + " -q --samples 0 --set accelerators=[8] --out " + dir.string()).status, 0);
  EXPECT_FALSE(fs::exists(dir / "timeline_N16.json"));
  EXPECT_FALSE(fs::exists(dir / "run_timeline_N16.json"));
  EXPECT_TRUE(fs::exists(dir / "timeline_N8.json"));
  EXPECT_TRUE(fs::exists(dir / "summary.csv"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  fs::remove_all(dir);
}

TEST(OutputSafety, AManifestsFileListReadsBackWhatToYamlWroteAndOnlyPlainNames) {
  // Only plain names are ever removed: never a path, a hidden file or a name with a quote.
  sp::output::Manifest m;
  m.fields = {{"command", "run"}};
  m.overrides = {"accelerators=[8]"};
  m.files = {"summary.csv", "timeline_N8.json", "../outside.csv", ".hidden", "say \"hi\".csv", "a b.csv"};
  EXPECT_EQ(sp::output::manifest_files(sp::output::to_yaml(m)), (std::set<std::string>{"summary.csv", "timeline_N8.json"}));
  m.files.clear();  // "files: []"
  EXPECT_TRUE(sp::output::manifest_files(sp::output::to_yaml(m)).empty());
  EXPECT_TRUE(sp::output::manifest_files("not a manifest\n").empty());
}

TEST(OutputSafety, TheRootAndSystemFoldersAreNotOutputFolders) {
  // Programs', libraries' and configuration's trees at any depth (/usr/bin and /etc/x once took a
  // run's files); /usr, /var, /var/lib themselves (checkouts live below them).
  for (const char* dir : {"/", "/etc", "/usr", "/proc/self", "/usr/bin", "/etc/sp_never_made", "/usr/lib/sp_never_made",
                          "/bin/sp_never_made", "/var", "/var/lib", "/usr/local"}) {
    const RunResult r = run("run " + scenario("bert") + " -q --out " + dir);
    EXPECT_EQ(r.status, 2) << dir << ": " << r.output;
    EXPECT_NE(r.output.find("is the file system's root or a system folder"), std::string::npos) << r.output;
  }
}

TEST(OutputSafety, ANameTooLongForTheFileSystemIsSaidAsSuch) {
  // A 300-byte folder name once read "is the file system's root or a system folder": the
  // canonical path failed on it and came back empty.
  const RunResult r = run("run " + scenario("bert") + " -q --out /tmp/" + std::string(300, 'a'));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("a name of 300 bytes in the path; the file system allows 255"), std::string::npos) << r.output;
}

TEST(OutputSafety, AFileSizeLimitEndsWithItsReasonAndLeavesNothingHalfWritten) {
  // 8 KiB: results.h5 (27 kB) cannot be written; before, HDF5 wrote it itself, the failed flush
  // went unchecked and its exit handler crashed (SIGSEGV) on the half-written file. 40 KiB: every
  // file of ours fits but not the plot (gnuplot is cut off; it used to be renamed into place).
  const std::string limits[] = {"8", "40"};
  for (const std::string& limit : limits) {
    if (limit == "40" && !has_gnuplot()) continue;
    const fs::path out = fresh("limit" + limit);
    const RunResult r = sp::testing::shell("ulimit -f " + limit + "; " + std::string(SP_CLI) + " run " + scenario("bert") +
                                           " -q --out " + out.string());
    EXPECT_EQ(r.status, 1) << limit << ": " << r.output;  // a write the system refused: 1, not 139
    EXPECT_NE(r.output.find("cannot write"), std::string::npos) << r.output;
    // All or nothing: the folder the run made for its outputs goes with them.
    EXPECT_FALSE(fs::exists(out)) << limit << ": all or nothing";
  }
}

TEST(OutputSafety, ASecondWriterIsRefusedAndAFinishedOneLeavesNoLock) {
  // This test holds the folder's lock as a running scalepoint would: a run into the folder is
  // refused at once, naming the holder; once the lock is let go the run writes, and leaves no
  // lock file behind.
  const fs::path out = fresh("lock");
  fs::create_directories(out);
  const fs::path lock = out / ".scalepoint.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string pid = std::to_string(::getpid());
  ASSERT_EQ(::write(fd, pid.data(), pid.size()), static_cast<ssize_t>(pid.size()));
  const RunResult busy = run("run " + scenario("bert") + " -q --out " + out.string());
  EXPECT_EQ(busy.status, 2) << busy.output;
  EXPECT_NE(busy.output.find("is being written by another scalepoint (pid " + pid + ")"), std::string::npos) << busy.output;
  EXPECT_FALSE(fs::exists(out / "summary.csv"));
  ::close(fd);
  fs::remove(lock);
  const RunResult free = run("run " + scenario("bert") + " -q --out " + out.string());
  EXPECT_EQ(free.status, 0) << free.output;
  EXPECT_TRUE(fs::exists(out / "summary.csv"));
  EXPECT_FALSE(fs::exists(lock));
}

TEST(OutputSafety, AnAttributeOverAnObjectHeadersRoomIsStillWritten) {
  // A 70,000-character description reaches results.h5 in the resolved scenario, more than an HDF5
  // object header holds (64 KiB): it was "internal error: HDF5: cannot create attribute"; now it
  // is a variable-length string (in the file's global heap) and reads back whole.
  const fs::path out = fresh("long");
  const std::string description(70000, 'x');
  const RunResult r = run("run " + scenario("bert") + " -q --set accelerators=[8] --set description=" + description +
                          " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output.substr(0, 400);
  H5::H5File file((out / "results.h5").string(), H5F_ACC_RDONLY);
  H5::Attribute yaml = file.openAttribute("scenario_resolved_yaml");
  std::string text;
  yaml.read(yaml.getStrType(), text);
  EXPECT_NE(text.find(description), std::string::npos);
}

TEST(OutputSafety, AFolderThatCannotBeWrittenIsAnInputErrorNamingOut) {
  // The README's promise: an output folder scalepoint may not write is exit 2 naming --out, with
  // nothing written. As root permissions do not stop a write; an immutable folder (chattr +i,
  // where the file system has the attribute) does, for root too.
  const fs::path dir = fresh("immutable");
  fs::create_directories(dir);
  if (sp::testing::shell("chattr +i " + dir.string() + " 2>/dev/null").status != 0) {
    GTEST_SKIP() << "this file system cannot make a folder immutable";
  }
  const RunResult r = run("run " + scenario("bert") + " -q --no-timelines --out " + dir.string());
  sp::testing::shell("chattr -i " + dir.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--out: "), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(dir));
}
