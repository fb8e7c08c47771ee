#include "sim/output/plot.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <system_error>

#include "sim/core/error.hpp"

#include <fmt/format.h>
#include <unistd.h>

namespace sp::output {

namespace {
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

std::string gnuplot_text(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "''";
    } else if (is_control_char(c)) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool run_gnuplot(const std::string& script, const std::filesystem::path& work_dir) {
  const std::filesystem::path file = work_dir / (".plot." + std::to_string(::getpid()) + ".gp");
  {
    std::ofstream out(file);
    out << script;
    out.flush();
    if (!out) {
      // No room for a few kilobytes of script (a full disk, a file-size limit): the disk, not
      // gnuplot, is why there is no plot, and it fails the run as any other write does; nothing
      // of the script is left behind (found by a hostile-input review).
      const int err = errno != 0 ? errno : EIO;
      std::error_code ec;
      std::filesystem::remove(file, ec);
      throw std::system_error(err, std::generic_category(), "cannot write " + file.string());
    }
  }
  const std::string cmd = "gnuplot " + shell_quote(file.string()) + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  std::error_code ec;
  std::filesystem::remove(file, ec);
  return status == 0;
}

bool plot_scaling(const std::filesystem::path& png, const Table& table, const std::string& title) {
  const Column& n = table.column("accelerators");
  const Column& t = table.column("time_to_train_min");
  const Column& e = table.column("e_prime");
  // With failures counted, the effective time and its E' beside the time to train (dashed).
  const Column& te = table.column("effective_time_to_train_min");
  const Column& ee = table.column("effective_e_prime");
  bool effective = false;
  for (std::size_t i = 0; i < table.rows(); ++i) effective = effective || (te.values[i] == te.values[i] && te.values[i] != t.values[i]);
  std::string data;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    data += fmt::format("{} {} {} {} {}\n", n.values[i], t.values[i], e.values[i], te.values[i], ee.values[i]);
  }
  const std::string time_plot = effective ? "plot $d using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'time to train', "
                                            "$d using 1:4 with linespoints lw 2 pt 6 dt 2 lc rgb '#1f77b4' title 'effective (failures, checkpoints, restarts)'\n"
                                          : "plot $d using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' notitle\n";
  const std::string e_plot = effective ? "plot $d using 1:3 with linespoints lw 2 pt 7 lc rgb '#d62728' title \"E'\", "
                                         "$d using 1:5 with linespoints lw 2 pt 6 dt 2 lc rgb '#d62728' title \"effective E'\", "
                                         "1 with lines dt 2 lc rgb '#888888' notitle\n"
                                       : "plot $d using 1:3 with linespoints lw 2 pt 7 lc rgb '#d62728' notitle, 1 with lines dt 2 lc rgb '#888888' notitle\n";
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 1100,460 font 'sans,11'\n"
      "set output {out}\n"
      "$d << EOD\n{data}EOD\n"
      "set multiplot layout 1,2 title {title}\n"
      "set logscale x 2\nset grid\nset key top right\nset xlabel 'accelerators (N)'\n"
      "set logscale y\nset ylabel 'time to train (min)'\nset title 'Time to train'\n"
      "{time_plot}"
      "unset logscale y\nset yrange [0:*]\nset ylabel \"E' = (T_{{ref}}/T_N)/(N/N_{{ref}})\"\n"
      "set title \"Per-accelerator efficiency E'\"\n"
      "{e_plot}"
      "unset multiplot\n",
      fmt::arg("out", gnuplot_text(png.string())), fmt::arg("data", data), fmt::arg("title", gnuplot_text(title)),
      fmt::arg("time_plot", time_plot), fmt::arg("e_plot", e_plot));
  return run_gnuplot(script, png.parent_path());
}

const char* series_colour(std::size_t i) {
  static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                             "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColours[i % std::size(kColours)];
}

}  // namespace sp::output
