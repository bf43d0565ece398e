// Copyright (c) siftdb authors.
//
// db_crashtest: kills db_stress with SIGKILL at random moments and checks
// the DB after each kill.
//
//   db_crashtest --db=DIR [--cycles=N] [--min_ms=100 --max_ms=1500]
//                [--seed=N] [--bin_dir=DIR] [--keep] [--remote_filter=H:P]
//
// A cycle: start `db_stress --mode=run` with a fresh seed, SIGKILL it after
// a random delay, then run `db_stress --mode=verify` (every acknowledged
// write present, nothing never written, iteration == point reads) and
// `ldb --db=DIR checkconsistency`. Prints one line per cycle and a summary.
// Exit status: 0 when every cycle passed, 1 at the first failure (the DB is
// left in place for inspection), 2 on bad usage.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "tools/common/args.h"
#include "util/random.h"

namespace siftdb {
namespace {

// Starts argv[0] with argv; returns its pid or -1.
pid_t Spawn(const std::vector<std::string>& argv, bool quiet) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (quiet) {
      freopen("/dev/null", "w", stdout);
    }
    std::vector<char*> cargv;
    for (const std::string& a : argv)
      cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

// Runs argv to completion; its exit status, or -1.
int Run(const std::vector<std::string>& argv, bool quiet) {
  const pid_t pid = Spawn(argv, quiet);
  if (pid < 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string SelfDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : self.parent_path().string();
}

int Main(int argc, char** argv) {
  tools::ArgParser args("db_crashtest", "db_crashtest --db=DIR [--cycles=N]");
  args.AddFlag("db", "DIR", "database directory (required; wiped first)");
  args.AddFlag("cycles", "N", "kill/verify cycles (default 20)");
  args.AddFlag("min_ms", "N", "shortest run before the kill (100)");
  args.AddFlag("max_ms", "N", "longest run before the kill (1500)");
  args.AddFlag("seed", "N", "random seed (default: time)");
  args.AddFlag("bin_dir", "DIR",
               "directory holding db_stress and ldb (default: this one)");
  args.AddFlag("threads", "N", "db_stress threads (default 4)");
  args.AddFlag("keys", "N", "db_stress key space (default 10000)");
  args.AddBoolFlag("keep", "keep the DB after a successful run");
  args.AddFlag("subcompactions", "N",
               "db_stress threads per compaction (default: 1, 2 or 4 "
               "drawn per cycle)");
  args.AddFlag("remote_filter", "HOST:PORT",
               "db_stress mirrors its filters to this Redis and verify checks "
               "the mirror");
  absl::Status s = args.Parse(argc, argv);
  if (!s.ok() || !args.Has("db")) {
    absl::FPrintF(stderr, "%s\n%s", s.ok() ? "--db is required" : s.ToString(),
                  args.Usage());
    return 2;
  }
  auto cycles = args.GetUint64("cycles", 20);
  auto min_ms = args.GetUint64("min_ms", 100);
  auto max_ms = args.GetUint64("max_ms", 1500);
  auto seed = args.GetUint64(
      "seed", static_cast<uint64_t>(
                  std::chrono::system_clock::now().time_since_epoch().count()));
  auto threads = args.GetUint64("threads", 4);
  auto keys = args.GetUint64("keys", 10000);
  for (const absl::Status& st :
       {cycles.status(), min_ms.status(), max_ms.status(), seed.status(),
        threads.status(), keys.status()}) {
    if (!st.ok()) {
      absl::FPrintF(stderr, "%s\n%s", st.ToString(), args.Usage());
      return 2;
    }
  }
  if (*max_ms < *min_ms) {
    absl::FPrintF(stderr, "--max_ms must be >= --min_ms\n");
    return 2;
  }
  // bin_dir holds both tools; by default the build tree layout
  // (<build>/tools/{db_stress,ldb,db_crashtest}).
  const std::string bin = args.GetString("bin_dir", SelfDir());
  const std::string stress = bin + "/db_stress";
  const std::string ldb = bin + "/ldb";
  for (const std::string& tool : {stress, ldb}) {
    if (access(tool.c_str(), X_OK) != 0) {
      absl::FPrintF(stderr, "db_crashtest: %s not found\n", tool);
      return 2;
    }
  }
  const std::string db = args.GetString("db");
  std::filesystem::remove_all(db);
  std::filesystem::remove(db + ".expected");

  Random rnd(*seed);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> common = {"--db=" + db,
                                     absl::StrFormat("--threads=%d", *threads),
                                     absl::StrFormat("--keys=%d", *keys)};
  if (args.Has("remote_filter")) {
    common.push_back("--remote_filter=" + args.GetString("remote_filter"));
  }
  auto with = [&](std::vector<std::string> head) {
    head.insert(head.end(), common.begin(), common.end());
    return head;
  };
  for (uint64_t cycle = 0; cycle < *cycles; cycle++) {
    const uint64_t delay = *min_ms + rnd.Uniform(*max_ms - *min_ms + 1);
    // Compactions split over threads die mid-way too.
    constexpr int kSubcompactionChoices[] = {1, 2, 4};
    const int drawn = kSubcompactionChoices[rnd.Uniform(3)];
    const std::string subcompactions = absl::StrFormat(
        "--subcompactions=%s", args.Has("subcompactions")
                                   ? args.GetString("subcompactions")
                                   : std::to_string(drawn));
    const pid_t pid = Spawn(with({stress, "--mode=run", subcompactions,
                                  absl::StrFormat("--seed=%d", *seed + cycle)}),
                            /*quiet=*/true);
    if (pid < 0) {
      absl::FPrintF(stderr, "cycle %d: cannot start db_stress\n", cycle);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {
      // It stopped on its own before the kill: only a violation does that.
      absl::FPrintF(stderr,
                    "cycle %d: db_stress exited with %d before the "
                    "kill (a live check failed)\n",
                    cycle, WEXITSTATUS(status));
      return 1;
    }
    const int verify = Run(with({stress, "--mode=verify"}), /*quiet=*/false);
    if (verify != 0) {
      absl::FPrintF(stderr,
                    "cycle %d (killed after %d ms): verify failed "
                    "(%d); DB left at %s\n",
                    cycle, delay, verify, db);
      return 1;
    }
    const int check = Run({ldb, "--db=" + db, "checkconsistency"}, true);
    if (check != 0) {
      absl::FPrintF(stderr,
                    "cycle %d: ldb checkconsistency failed (%d); DB "
                    "left at %s\n",
                    cycle, check, db);
      return 1;
    }
    absl::PrintF("cycle %d: killed after %d ms (%s), verified\n", cycle, delay,
                 subcompactions);
    fflush(stdout);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  absl::PrintF("db_crashtest: %d cycles passed in %.1f s (seed %d)\n", *cycles,
               secs, *seed);
  if (!args.GetBool("keep")) {
    std::filesystem::remove_all(db);
    std::filesystem::remove(db + ".expected");
  }
  return 0;
}

}  // namespace
}  // namespace siftdb

int main(int argc, char** argv) { return siftdb::Main(argc, argv); }
