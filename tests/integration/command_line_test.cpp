// The `weir` command line (apps/main.cpp, Boost.Program_options): each command's options in
// both spellings (`--key value`, `--key=value`), and every kind of bad command line refused with
// exit status 2 and a message that names what is wrong, before anything is started.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/test_support.hpp"

namespace weir::test {
namespace {

struct outcome {
  int status = -1;
  std::string out;
  std::string err;
};

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    q += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  }
  return q + "'";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs `weir <args>` to its end (each command here exits at once), its output captured.
outcome run(const std::vector<std::string>& args) {
  temp_dir dir;
  std::string cmd = "cd " + quoted(dir.path()) + " && timeout 20 " + quoted(WEIR_BINARY);
  for (const auto& a : args) {
    cmd += " " + quoted(a);
  }
  cmd += " >out.txt 2>err.txt </dev/null";
  int raw = std::system(cmd.c_str());
  outcome o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = read_file(dir.path() + "/out.txt");
  o.err = read_file(dir.path() + "/err.txt");
  return o;
}

TEST(CommandLine, CheckTakesBothSpellingsOfAnOption) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"serve", "--check", "--http", "127.0.0.1:0", "--log-level", "warn"},
           {"serve", "--check", "--http=127.0.0.1:0", "--log-level=warn", "--demo"}}) {
    auto o = run(args);
    EXPECT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("weir: configuration valid"), std::string::npos) << o.out;
  }
}

TEST(CommandLine, ClusterFlagsRepeat) {
  auto o = run({"serve", "--check", "--node-id", "a", "--member", "a=127.0.0.1:7001,127.0.0.1:8001",
                "--member", "b=127.0.0.1:7002,127.0.0.1:8002"});
  // Two members parsed: the cluster's own check is what refuses it (no shared secret).
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("cluster: members must authenticate each other"), std::string::npos)
      << o.err;
}

TEST(CommandLine, BadCommandLinesExitWithTwoAndSayWhy) {
  struct bad {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<bad> cases{
      {{"serve", "--bogus"}, "weir serve: unrecognised option '--bogus'"},
      // Options are spelled in full: an abbreviation is not guessed.
      {{"serve", "--chec"}, "weir serve: unrecognised option '--chec'"},
      {{"serve", "--http"}, "weir serve: the required argument for option '--http' is missing"},
      {{"serve", "--check", "--http", "localhost:99999"}, "--http wants HOST:PORT"},
      {{"serve", "--check", "--member", "a=1"}, "--member wants ID=PEER_HOST:PORT,HTTP_HOST:PORT"},
      {{"serve", "--check", "--log-level", "loud"}, "--log-level wants debug, info"},
      {{"serve", "--check", "--advertise-peer", "127.0.0.1:1"},
       "give both --advertise-peer and --advertise-http"},
      {{"serve", "stray"}, "weir serve: "},
      // A single-valued flag twice is a mistake to point out, not to resolve silently.
      {{"serve", "--check", "--http", "127.0.0.1:1", "--http", "127.0.0.1:2"},
       "option '--http' cannot be specified more than once"},
      {{"watch", "--frames", "0"}, "--frames wants a positive number"},
      {{"watch", "--arg", "novalue"}, "--arg wants NAME=VALUE"},
      {{"query", "t", "--dataset", "d", "--limit", "x"},
       "the argument ('x') for option '--limit' is invalid"},
      {{"query", "t", "a", "b", "--dataset", "d"}, "give SPACE and, for one object's dataset"},
      {{"query-subscribe", "--dataset", "d"}, "give SPACE"},
      {{"nope"}, "weir: unknown command 'nope'"},
      {{}, "usage:"},
  };
  for (const auto& c : cases) {
    std::string line;
    for (const auto& a : c.args) {
      line += " " + a;
    }
    SCOPED_TRACE("weir" + line);
    auto o = run(c.args);
    EXPECT_EQ(o.status, 2) << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "");
  }
}

TEST(CommandLine, VersionAndHelp) {
  auto v = run({"version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("weir ", 0), 0u) << v.out;
  auto h = run({"--help"});
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("usage:"), std::string::npos);
}

}  // namespace
}  // namespace weir::test
