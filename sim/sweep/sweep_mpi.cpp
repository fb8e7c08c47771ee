// The sweep's drivers: serial, and under mpirun with rank 0 handing out points on demand (each
// worker keeps two requests open so it never waits for rank 0, which computes points too) and
// writing every result in point order.
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <list>
#include <vector>

#include "sim/sweep/sweep_runner.hpp"

namespace sp {

namespace {

constexpr int kRequest = 1, kAssign = 2, kResult = 3;
constexpr int kPrefetch = 2;

// Results go out without waiting for rank 0 to take them (it may be computing a point for up
// to a point's time): every send keeps its own buffer until it completes.
struct ResultSender {
  std::list<std::pair<std::vector<char>, MPI_Request>> in_flight;

  // The message: the point id, whether it failed, then its rows.
  void send(int point, const PointResult& r) {
    const int head[2] = {point, r.failed ? 1 : 0};
    in_flight.remove_if([](auto& m) {
      int done = 0;
      MPI_Test(&m.second, &done, MPI_STATUS_IGNORE);
      return done != 0;
    });
    auto& [msg, request] = in_flight.emplace_back(std::vector<char>(sizeof head + r.rows.size()), MPI_REQUEST_NULL);
    std::memcpy(msg.data(), head, sizeof head);
    std::memcpy(msg.data() + sizeof head, r.rows.data(), r.rows.size());
    MPI_Isend(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, 0, kResult, MPI_COMM_WORLD, &request);
  }
  ~ResultSender() {
    for (auto& m : in_flight) MPI_Wait(&m.second, MPI_STATUS_IGNORE);
  }
};

void worker(const SweepSpec& spec, const models::Catalog& catalog) {
  int outstanding = 0;
  const int none = 0;
  for (; outstanding < kPrefetch; ++outstanding) MPI_Send(&none, 1, MPI_INT, 0, kRequest, MPI_COMM_WORLD);
  bool stopped = false;
  ResultSender results;
  while (outstanding > 0) {
    int point = -1;
    MPI_Recv(&point, 1, MPI_INT, 0, kAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    --outstanding;
    if (point < 0) {
      stopped = true;
      continue;
    }
    results.send(point, run_point(spec, spec.points[static_cast<std::size_t>(point)], catalog));
    if (!stopped) {
      MPI_Send(&none, 1, MPI_INT, 0, kRequest, MPI_COMM_WORLD);
      ++outstanding;
    }
  }
}

SweepResult leader(const SweepSpec& spec, const models::Catalog& catalog, SweepWriter& out, Progress& progress,
                   int ranks) {
  const int total = static_cast<int>(spec.points.size());
  int next = out.done();  // points before it are on disk already
  SweepResult r{total, total - out.done(), 0};
  std::vector<int> requests(static_cast<std::size_t>(ranks), 0), replies(static_cast<std::size_t>(ranks), 0),
      results(static_cast<std::size_t>(ranks), 0);
  const auto serve = [&](bool block) {
    int flag = 0;
    MPI_Status st;
    if (block) {
      MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      flag = 1;
    } else {
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    }
    if (!flag) return false;
    const auto w = static_cast<std::size_t>(st.MPI_SOURCE);
    if (st.MPI_TAG == kRequest) {
      int ignored = 0;
      MPI_Recv(&ignored, 1, MPI_INT, st.MPI_SOURCE, kRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++requests[w];
      const int point = next < total ? next++ : -1;
      MPI_Send(&point, 1, MPI_INT, st.MPI_SOURCE, kAssign, MPI_COMM_WORLD);
      ++replies[w];
    } else {
      int size = 0;
      MPI_Get_count(&st, MPI_CHAR, &size);
      std::vector<char> msg(static_cast<std::size_t>(size));
      MPI_Recv(msg.data(), size, MPI_CHAR, st.MPI_SOURCE, kResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      int head[2] = {0, 0};
      std::memcpy(head, msg.data(), sizeof head);
      ++results[w];
      out.add(head[0], PointResult{std::string(msg.data() + sizeof head, msg.size() - sizeof head), head[1] != 0});
      progress.update(out.done());
    }
    return true;
  };
  // The workers' first requests before rank 0 starts a point of its own, so that none waits a
  // whole point for its first assignment.
  for (int w = 1; w < ranks; ++w) {
    while (requests[static_cast<std::size_t>(w)] < kPrefetch) serve(true);
  }
  while (out.done() < total) {
    while (serve(false)) {
    }
    if (next < total) {
      const int mine = next++;
      out.add(mine, run_point(spec, spec.points[static_cast<std::size_t>(mine)], catalog));
      progress.update(out.done());
    } else if (out.done() < total) {
      serve(true);
    }
  }
  // Every worker sends kPrefetch requests and one more per result: answer them all.
  for (int w = 1; w < ranks; ++w) {
    while (replies[static_cast<std::size_t>(w)] < kPrefetch + results[static_cast<std::size_t>(w)]) serve(true);
  }
  r.failed = out.failed();
  return r;
}

}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

SweepResult run_sweep(const SweepSpec& spec, const std::string& dir, bool resume, bool quiet,
                      const std::function<void(const SweepResult&)>& finish) {
  const models::Catalog catalog(models::data_root() / "models");
  const bool mpi = launched_by_mpi();
  int rank = 0, ranks = 1;
  if (mpi) {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  }
  SweepResult r;
  if (rank == 0) {
    // A bad --resume is found before any worker starts: rank 0 throws, and aborts the others.
    try {
      SweepWriter out(dir, spec, resume);
      Progress progress(static_cast<int>(spec.points.size()), out.done(), quiet);
      if (ranks > 1) {
        r = leader(spec, catalog, out, progress, ranks);
      } else {
        r = SweepResult{static_cast<int>(spec.points.size()), static_cast<int>(spec.points.size()) - out.done(), 0};
        for (int p = out.done(); p < r.points; ++p) {
          out.add(p, run_point(spec, spec.points[static_cast<std::size_t>(p)], catalog));
          progress.update(out.done());
        }
        r.failed = out.failed();
      }
      progress.finish(out.done());
      if (finish) finish(r);  // `out` holds the folder's lock until this is written
    } catch (...) {
      if (mpi && ranks > 1) MPI_Abort(MPI_COMM_WORLD, 2);
      if (mpi) MPI_Finalize();
      throw;
    }
  } else {
    worker(spec, catalog);
  }
  if (mpi) MPI_Finalize();
  return r;
}

}  // namespace sp
