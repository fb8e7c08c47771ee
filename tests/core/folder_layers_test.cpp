// The folders of the code form layers: the graph of #include edges between folders (sim/core,
// models/network, calibration/fit, ...; models/, sim/ and calibration/ themselves for files at
// their top) has no cycle, so each folder can be read knowing only those below it. A cycle is
// reported with its edges and the files that make them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// models/network/platform.hpp -> models/network; models/catalog.hpp -> models.
std::string folder_of(const std::string& path) {
  const auto first = path.find('/');
  const auto second = path.find('/', first + 1);
  return second == std::string::npos ? path.substr(0, first) : path.substr(0, second);
}

TEST(FolderLayers, TheIncludeGraphBetweenFoldersHasNoCycle) {
  const fs::path root(SP_SOURCE_DIR);
  const std::regex include(R"re(#include "([^"]+)")re");
  std::map<std::string, std::map<std::string, std::string>> edges;  // from -> to -> a file making it
  for (const char* top : {"sim", "models", "calibration"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cuh" && ext != ".inc")) continue;
      const std::string file = fs::relative(e.path(), root).generic_string();
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      for (std::sregex_iterator m(s.begin(), s.end(), include), end; m != end; ++m) {
        const std::string target = (*m)[1];
        if (!fs::exists(root / target)) continue;  // a system or generated header
        const std::string a = folder_of(file), b = folder_of(target);
        if (a != b) edges[a].emplace(b, file + " includes " + target);
      }
    }
  }
  ASSERT_GT(edges.size(), 10u);  // the scan found the code
  // Depth-first search for a back edge; the path to it is the cycle.
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::string cycle;
  const std::function<void(const std::string&)> visit = [&](const std::string& v) {
    state[v] = 1;
    path.push_back(v);
    for (const auto& [w, why] : edges[v]) {
      if (!cycle.empty()) break;
      if (state[w] == 1) {
        for (auto it = std::find(path.begin(), path.end(), w); it != path.end(); ++it) {
          const std::string& next = it + 1 != path.end() ? *(it + 1) : w;
          cycle += *it + " -> " + next + " (" + edges[*it][next] + ")\n";
        }
      } else if (state[w] == 0) {
        visit(w);
      }
    }
    path.pop_back();
    state[v] = 2;
  };
  for (const auto& [v, out] : edges) {
    if (state[v] == 0 && cycle.empty()) visit(v);
  }
  EXPECT_TRUE(cycle.empty()) << "folders include each other in a cycle:\n" << cycle;
}

}  // namespace
