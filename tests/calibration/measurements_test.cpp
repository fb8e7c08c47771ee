// Importing network timings: sample lines in the formats nccl-tests, OSU and MLPerf logs print
// (nccl-tests text and JSON, OSU, scalepoint-bench CSV), launcher prefixes, and the errors.
#include "calibration/network/measurements.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "tests/input_error_message.hpp"

namespace sp::calibration {

namespace {

// What a caller passes as --op, --ranks, --nodes.
MeasurementDefaults given(std::optional<std::string> op, std::optional<int> ranks = {},
                          std::optional<int> nodes = {}) {
  MeasurementDefaults d;
  d.op = std::move(op);
  d.ranks = ranks;
  d.nodes = nodes;
  return d;
}

std::string error_of(const std::string& text, const std::string& name, const MeasurementDefaults& d = {}) {
  return input_error_message([&] { parse_measurements(text, name, d); });
}

void expect_rows(const std::vector<Measurement>& m, const std::vector<double>& bytes,
                 const std::vector<double>& us) {
  ASSERT_EQ(m.size(), bytes.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    EXPECT_DOUBLE_EQ(m[i].bytes, bytes[i]) << "row " << i;
    EXPECT_DOUBLE_EQ(m[i].time_us, us[i]) << "row " << i;
  }
}

// Section 1.3 (DGX H100, 8 ranks), with the run header and rank lines in nccl-tests' own form.
const char* const kDgx =
    R"txt(# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 1006102 on pool0-01806 device  0 [0000:19:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 1006103 on pool0-01806 device  1 [0000:3b:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid 1006104 on pool0-01806 device  2 [0000:4c:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid 1006105 on pool0-01806 device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid 1006106 on pool0-01806 device  4 [0000:9b:00] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid 1006107 on pool0-01806 device  5 [0000:bb:00] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid 1006108 on pool0-01806 device  6 [0000:cb:00] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid 1006109 on pool0-01806 device  7 [0000:db:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    13.67    0.00    0.00      0    13.03    0.00    0.00      0
        8192          2048     float     sum      -1    17.40    0.47    0.82      0    16.83    0.49    0.85      0
     1048576        262144     float     sum      -1    27.37   38.31   67.04      0    26.93   38.94   68.14      0
    67108864      16777216     float     sum      -1    324.7  206.67  361.67      0    324.7  206.67  361.68      0
   536870912     134217728     float     sum      -1   2151.0  249.59  436.79      0   2149.3  249.79  437.13      0
  8589934592    2147483648     float     sum      -1    31307  274.38  480.16      0    31328  274.19  479.84      0
 17179869184    4294967296     float     sum      -1    62648  274.23  479.90      0    62636  274.28  479.99      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 159.151
)txt";

// Section 1.4 (AWS p5, 2 nodes x 8), srun --label prefix kept.
const char* const kAws =
    R"txt(0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
0: #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
0:            8             2     float     sum      -1    69.12    0.00    0.00      0    72.43    0.00    0.00      0
0:      1048576        262144     float     sum      -1    123.2    8.51   15.95      0    121.3    8.64   16.21      0
0:    134217728      33554432     float     sum      -1    870.3  154.22  289.16      0    876.8  153.07  287.01      0
0:   1073741824     268435456     float     sum      -1   4607.6  233.04  436.95      0   4565.6  235.18  440.96      0
0:  17179869184    4294967296     float     sum      -1    66132  259.78  487.09      0    66109  259.87  487.26      0
)txt";

// Section 2.1 (osu_allreduce, 4 nodes x 36 ranks).
const char* const kOsuAllreduce = R"txt(# OSU MPI Allreduce Latency Test v7.5
# Datatype: MPI_INT.
# Size       Avg Latency(us)
4                      11.69
8                      15.34
1024                   17.97
1048576              3576.91
16777216            28519.36
268435456          496306.98
)txt";

}  // namespace

TEST(Measurements, NcclTestsDgxH100EightRanks) {
  const auto m = parse_measurements(kDgx, "dgx_h100.txt", given("all_reduce"));
  expect_rows(m, {8, 8192, 1048576, 67108864, 536870912, 8589934592.0, 17179869184.0},
              {13.67, 17.40, 27.37, 324.7, 2151.0, 31307, 62648});
  ASSERT_EQ(m.size(), 7u);
  for (const Measurement& r : m) {
    EXPECT_EQ(r.format, "nccl-tests");
    EXPECT_EQ(r.op, "all_reduce");
    EXPECT_EQ(r.ranks, 8);
    EXPECT_EQ(r.nodes, 1);
    EXPECT_EQ(r.scope, "intra");
    EXPECT_EQ(r.source, "dgx_h100.txt");
  }
  EXPECT_EQ(m[0].line, 16);
  EXPECT_EQ(m[6].line, 22);
}

TEST(Measurements, NcclTestsRankLinesMustCoverEveryRank) {
  // A stray "Rank 999999" line made a million-rank group of an 8-GPU node: nccl-tests prints one
  // line for each of ranks 0 to n - 1, so a gap is refused at the highest rank's line.
  std::string text = kDgx;
  const std::string rank7 = "#  Rank  7 Group";
  text.replace(text.find(rank7), rank7.size(), "#  Rank 99 Group");
  EXPECT_EQ(error_of(text, "dgx_h100.txt", given("all_reduce")),
            "dgx_h100.txt:11: rank 99 but only 8 rank lines: nccl-tests prints one for each of ranks 0 to n - 1");
  text.replace(text.find("#  Rank 99 Group"), 16, "#  Rank 9999999 Group");
  EXPECT_EQ(error_of(text, "dgx_h100.txt", given("all_reduce")),
            "dgx_h100.txt:11: rank 9999999 is beyond any measured job (at most 999999)");
}

TEST(Measurements, NcclTestsSrunLabelAndOpFromFileName) {
  const auto m = parse_measurements(kAws, "logs/all_reduce_perf.log", given(std::nullopt, 16, 2));
  expect_rows(m, {8, 1048576, 134217728, 1073741824, 17179869184.0}, {69.12, 123.2, 870.3, 4607.6, 66132});
  EXPECT_EQ(m[0].op, "all_reduce");
  EXPECT_EQ(m[0].ranks, 16);
  EXPECT_EQ(m[0].nodes, 2);
  EXPECT_EQ(m[0].scope, "");  // 8 ranks per node: neither intra nor inter alone
  EXPECT_EQ(m[4].line, 7);
}

TEST(Measurements, NcclTestsOldFormatWithoutRoot) {
  // nccl-tests <= 2.10 (NVIDIA/nccl-tests#107): no root column, "error" instead of "#wrong".
  const char* text =
      R"txt(#                                                     out-of-place                       in-place
#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum    52.31   20.05   35.08  0e+00    51.87   20.22   35.38  0e+00
  1073741824     268435456     float     sum    12345   86.98  152.22  0e+00    12340   87.01  152.27  0e+00
)txt";
  const auto m = parse_measurements(text, "old.txt", given("all_reduce", 8));
  expect_rows(m, {1048576, 1073741824}, {52.31, 12345});
  // No header at all: 12 fields, so field 5 is the time even when it is a whole number.
  const auto bare = parse_measurements(
      "  1073741824  268435456  float  sum  12345  86.98  152.22  0e+00  12340  87.01  152.27  0e+00\n",
      "bare.txt", given("all_reduce", 8));
  expect_rows(bare, {1073741824}, {12345});
}

TEST(Measurements, NcclTestsOpenMpiTagOutput) {
  const char* text =
      R"txt([1,0]<stdout>:#  Rank  0 Group  0 Pid   4242 on     node-a device  0 [0000:1b:00] NVIDIA A100-SXM4-80GB
[1,0]<stdout>:#  Rank  1 Group  0 Pid   5151 on     node-b device  0 [0000:1b:00] NVIDIA A100-SXM4-80GB
node-a:4242:4242 [0] NCCL INFO Channel 00/02 :    0   1
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[1,0]<stdout>:     4194304       1048576     float     sum      -1    95.44   43.95   43.95      0    94.80   44.24   44.24      0
)txt";
  const auto m = parse_measurements(text, "tagged.txt", given("all_reduce"));
  expect_rows(m, {4194304}, {95.44});
  EXPECT_EQ(m[0].line, 5);
  EXPECT_EQ(m[0].ranks, 2);
  EXPECT_EQ(m[0].nodes, 2);
  EXPECT_EQ(m[0].scope, "inter");
}

TEST(Measurements, NcclTestsPerIterationTimestampAndCputimeColumns) {
  const MeasurementDefaults d = given("all_gather", 8);
  // -I 1: i_min i_max i_p99 i_cv% after each #wrong; the first row under a header, the second alone.
  const char* with_header =
      R"txt(#       size         count      type   redop    root     time   algbw   busbw #wrong    i_min   i_max   i_p99   i_cv%     time   algbw   busbw #wrong    i_min   i_max   i_p99   i_cv%
     1048576        262144     float    none      -1    27.37   38.31   33.52      0    26.10   29.85   29.70    3.2    26.93   38.94   34.07      0    25.90   28.80   28.71    2.9
)txt";
  expect_rows(parse_measurements(with_header, "i.txt", d), {1048576}, {27.37});
  const char* alone =
      "     1048576        262144     float    none      -1    27.37   38.31   33.52      0"
      "    26.10   29.85   29.70    3.2    26.93   38.94   34.07      0    25.90   28.80   28.71    2.9\n";
  expect_rows(parse_measurements(alone, "i.txt", d), {1048576}, {27.37});
  // -C 1 and -S 1: cputime in the time column, a timestamp after the in-place block.
  const char* cputime =
      R"txt(#       size         count      type   redop    root  cputime   algbw   busbw #wrong  cputime   algbw   busbw #wrong           timestamp
        8192          2048     float    none      -1    17.40    0.47    0.41      0    16.83    0.49    0.43      0  2025-03-01 10:00:00
)txt";
  expect_rows(parse_measurements(cputime, "c.txt", d), {8192}, {17.40});
}

TEST(Measurements, NcclTestsJsonList) {
  const char* text = R"json([
  {"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
   "out_of_place": {"time": 13.670000, "alg_bw": 0.000585, "bus_bw": 0.001024, "nwrong": null},
   "in_place": {"time": 13.030000, "alg_bw": 0.000614, "bus_bw": 0.001075, "nwrong": null}},
  {"size": 17179869184, "count": 4294967296, "type": "float", "redop": "sum", "root": "    -1",
   "out_of_place": {"cpu_time": 62648.000000, "alg_bw": 274.230000, "bus_bw": 479.900000, "nwrong": 0.000000},
   "in_place": {"cpu_time": 62636.000000, "alg_bw": 274.280000, "bus_bw": 479.990000, "nwrong": 0.000000}}
]
)json";
  const auto m = parse_measurements(text, "results.json", given("all_reduce", 8));
  expect_rows(m, {8, 17179869184.0}, {13.67, 62648});
  EXPECT_EQ(m[0].format, "nccl-tests-json");
  EXPECT_EQ(m[0].op, "all_reduce");
  EXPECT_EQ(m[0].ranks, 8);
  EXPECT_EQ(m[0].line, 2);
  EXPECT_EQ(m[1].line, 5);
}

TEST(Measurements, NcclTestsJsonObjectAsWrittenByDashJ) {
  // nccl-tests -J writes one line: the run, the config with one device entry per process
  // (here 2 processes x 8 GPUs), then the results list. '/' is escaped as "\/".
  const char* text =
      R"json({"version":1,"start_time":"2025-03-01 10:00:00","args":["\/opt\/nccl-tests\/build\/all_gather_perf","-b","8","-g","8"],)json"
      R"json("env":["PATH=\/usr\/bin"],"nccl_version":22105,"config":{"nthreads":1,"ngpus":8,"minimum_bytes":8,)json"
      R"json("maximum_bytes":1048576,"step_factor":2,"warmup_iters":5,"iterations":20,"devices":[)json"
      R"json({"rank":0,"group":0,"pid":101,"hostname":"node-a","device":0,"device_hex":"0000:19:00","device_info":"NVIDIA H100 80GB HBM3"},)json"
      R"json({"rank":8,"group":0,"pid":202,"hostname":"node-b","device":0,"device_hex":"0000:19:00","device_info":"NVIDIA H100 80GB HBM3"}]},)json"
      R"json("results":[{"size":1048576,"count":16384,"type":"float","redop":"none","root":"    -1",)json"
      R"json("out_of_place":{"time":61.250000,"alg_bw":17.119608,"bus_bw":16.049632,"nwrong":0.000000},)json"
      R"json("in_place":{"time":60.500000,"alg_bw":17.331835,"bus_bw":16.248595,"nwrong":0.000000},)json"
      R"json("actual_iterations":20,"experiment_name":"all_gather"}],)json"
      R"json("out_of_bounds":{"count":0,"okay":"true"},"end_time":"2025-03-01 10:00:05"})json";
  const auto m = parse_measurements(text, "run.json");
  expect_rows(m, {1048576}, {61.25});
  EXPECT_EQ(m[0].op, "all_gather");  // from args[0]
  EXPECT_EQ(m[0].ranks, 16);         // 2 processes x 1 thread x 8 GPUs
  EXPECT_EQ(m[0].nodes, 2);
  EXPECT_EQ(m[0].line, 1);
}

TEST(Measurements, OsuAllreduceWithRanksGiven) {
  const auto m = parse_measurements(kOsuAllreduce, "osu_allreduce.txt", given(std::nullopt, 144, 4));
  expect_rows(m, {4, 8, 1024, 1048576, 16777216, 268435456},
              {11.69, 15.34, 17.97, 3576.91, 28519.36, 496306.98});
  EXPECT_EQ(m[0].format, "osu");
  EXPECT_EQ(m[0].op, "all_reduce");
  EXPECT_EQ(m[0].ranks, 144);
  EXPECT_EQ(m[0].nodes, 4);
  EXPECT_EQ(m[0].line, 4);
  EXPECT_EQ(m[5].line, 9);
}

TEST(Measurements, OsuFullColumnsAndChatter) {
  // Section 2.3, with MPI chatter of the kind OMB output carries interleaved.
  const char* text = R"txt(# OSU MPI-CUDA Allreduce Latency Test v7.0
[1712345678.123456] [jwb0001:12345:0]          parser.c:2036 UCX  WARN  unused environment variable: UCX_MAX_RNDV_RAILS
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
16777216             8630.58           8619.50           8642.46         10
)txt";
  const auto m = parse_measurements(text, "osu_full.txt", given(std::nullopt, 4));
  expect_rows(m, {16777216}, {8630.58});
  EXPECT_EQ(m[0].op, "all_reduce");
  EXPECT_EQ(m[0].ranks, 4);
  EXPECT_EQ(m[0].line, 4);
}

TEST(Measurements, OsuBandwidthToTimeByHand) {
  const char* text = R"txt(# OSU MPI Bandwidth Test v7.5
# Size      Bandwidth (MB/s)
1                       2.50
1048576             12500.00
)txt";
  const auto m = parse_measurements(text, "osu_bw.txt");
  // MB = 1e6 B: 1 B / 2.5e6 B/s = 0.4 us; 1048576 B / 12.5e9 B/s = 83.88608 us.
  expect_rows(m, {1, 1048576}, {0.4, 83.88608});
  EXPECT_EQ(m[0].op, "ping_pong");
  EXPECT_EQ(m[0].ranks, 2);
}

TEST(Measurements, OsuRowWhoseTimeIsNotFiniteIsNamedNotSkipped) {
  // "1024  nan": a measurement that failed, not chatter; it used to vanish from the fit unseen.
  for (const char* value : {"nan", "inf", "1e400"}) {
    const std::string text = std::string("# OSU MPI Bandwidth Test v7.5\n# Size      Bandwidth (MB/s)\n1   2.50\n1024   ") +
                             value + "\n";
    EXPECT_EQ(input_error_message([&] { parse_measurements(text, "osu_bw.txt"); }),
              std::string("osu_bw.txt:4: OSU data row of 1024 B: \"") + value + "\" is not a finite bandwidth");
  }
  // In OMB's full statistics the failed figure may be a later column: that one is quoted.
  const char* full = "# OSU MPI Allreduce Latency Test v7.0\n# Size  Avg Latency(us)  Min Latency(us)  Max Latency(us)  Iterations\n"
                     "1024  17.97  17.50  nan  1000\n";
  EXPECT_EQ(input_error_message([&] { parse_measurements(full, "osu_full.txt", given(std::nullopt, 4)); }),
            "osu_full.txt:3: OSU data row of 1024 B: \"nan\" is not a finite value");
}

TEST(Measurements, ScalepointBenchCsv) {
  const char* text = R"csv(# scalepoint-bench --out bench.csv
# mpi: Open MPI v4.1.5, package: Open MPI builder Distribution, ident: 4.1.5, repo rev: v4.1.5, Feb 23, 2023
# ranks: 16, nodes: 2, ranks on node 0: 8
# host: node-a ranks: 8
# host: node-b ranks: 8
scope,op,ranks,nodes,bytes,repetitions,time_min_us,time_median_us,time_p10_us,time_p90_us,algbw_GB_per_s,busbw_GB_per_s
intra,all_reduce,8,1,1048576,20,40.1000,42.0000,40.5000,44.0000,24.9661,43.6907
inter,ping_pong,2,2,8,20,1.9000,2.1000,1.9500,2.4000,0.0038,0.0038
)csv";
  const auto m = parse_measurements(text, "bench.csv");
  expect_rows(m, {1048576, 8}, {42.0, 2.1});
  EXPECT_EQ(m[0].format, "scalepoint-bench");
  EXPECT_EQ(m[0].scope, "intra");
  EXPECT_EQ(m[0].op, "all_reduce");
  EXPECT_EQ(m[0].ranks, 8);
  EXPECT_EQ(m[0].nodes, 1);
  EXPECT_EQ(m[0].line, 7);
  EXPECT_EQ(m[1].scope, "inter");
  EXPECT_EQ(m[1].op, "ping_pong");
  EXPECT_EQ(m[1].ranks, 2);
  EXPECT_EQ(m[1].nodes, 2);
  EXPECT_EQ(m[1].line, 8);
  // The same file saved with a byte-order mark (found by a hostile-input review: it was taken for
  // nccl-tests output with no rows) reads the same, at the same lines.
  const auto marked = parse_measurements(std::string("\xEF\xBB\xBF") + text, "bench.csv");
  expect_rows(marked, {1048576, 8}, {42.0, 2.1});
  EXPECT_EQ(marked[1].line, 8);
  // Two billion ranks: beyond the bound, said as such (it read "needs a count of at least 2").
  std::string huge = text;
  huge.replace(huge.find("intra,all_reduce,8,"), 19, "intra,all_reduce,2000000000,");
  EXPECT_NE(input_error_message([&] { (void)parse_measurements(huge, "bench.csv"); })
                .find("bench.csv:7: ranks: needs a count from 2 to 2^30"),
            std::string::npos);
}

TEST(Measurements, ErrorsNameTheFileAndWhatToPass) {
  // nccl-tests does not print the collective, and "dgx.txt" does not name one.
  const std::string no_op = error_of(kDgx, "dgx.txt");
  EXPECT_NE(no_op.find("dgx.txt"), std::string::npos) << no_op;
  EXPECT_NE(no_op.find("--op"), std::string::npos) << no_op;
  // OSU does not print the rank count.
  const std::string no_ranks = error_of(kOsuAllreduce, "osu.txt");
  EXPECT_NE(no_ranks.find("--ranks"), std::string::npos) << no_ranks;
  // A row whose time is garbled names file:line.
  const char* garbled =
      R"txt(#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
           8             2     float     sum      -1    13.67    0.00    0.00      0    13.03    0.00    0.00      0
        8192          2048     float     sum      -1      N/A    0.47    0.82      0    16.83    0.49    0.85      0
)txt";
  const std::string bad = error_of(garbled, "bad.txt", given("all_reduce"));
  EXPECT_EQ(bad.rfind("bad.txt:3: ", 0), 0u) << bad;
  EXPECT_NE(bad.find("N/A"), std::string::npos) << bad;
  EXPECT_EQ(
      error_of("        8192  2048  float  sum  -1  17.4x  0.47  0.82  0\n", "x.txt", given("all_reduce"))
          .rfind("x.txt:1: ", 0),
      0u);
  EXPECT_EQ(error_of("        8192  2048  float  sum  -1\n", "cut.txt", given("all_reduce"))
                .rfind("cut.txt:1: ", 0),
            0u);
  // No data rows; broken JSON; a bad scalepoint-bench row; an OSU test that is not a collective.
  EXPECT_NE(
      error_of("# nThread 1 nGpus 1\n# Avg bus bandwidth    : 159.151\n", "empty.txt", given("all_reduce"))
          .find("no measurements"),
      std::string::npos);
  EXPECT_NE(error_of("{\"results\": [", "broken.json").find("broken.json"), std::string::npos);
  EXPECT_NE(error_of("scope,op,ranks,nodes,bytes,time_median_us\nintra,all_reduce,8,1,8,-1\n", "b.csv")
                .find("b.csv:2: "),
            std::string::npos);
  EXPECT_NE(
      error_of("# OSU MPI Bi-Directional Bandwidth Test v7.5\n1 2.0\n", "bibw.txt").find("not supported"),
      std::string::npos);
}

}  // namespace sp::calibration
