// The `weir` binary: `serve` runs a node (optionally the demo), `watch` prints a live query,
// `query` and `query-subscribe` read a window. Command lines are parsed by Boost.Program_options.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "apps/config/node_config.hpp"
#include "apps/demo.hpp"
#include "apps/node.hpp"
#include "apps/watch_client.hpp"
#include "apps/windowed_client.hpp"
#include "log/log.hpp"

namespace {

constexpr const char* usage = R"(usage:
  weir serve [--config FILE] [--demo] [--http HOST:PORT] [--grpc HOST:PORT] [--peer HOST:PORT]
             [--data-dir DIR] [--node-id ID --member ID=PEER_HOST:PORT,HTTP_HOST:PORT ...]
             [--node-id ID --advertise-peer HOST:PORT --advertise-http HOST:PORT]
             [--peer-token-file FILE] [--log-level LEVEL] [--log-format text|json] [--check]
      Runs a node. --demo uses the built-in demo configuration (unless --config is given),
      seeds demo data and changes a few records every second (in a cluster: from the member
      with the smallest id only). --node-id and --member (one per member, this node included)
      make it a cluster member; they replace the config file's `cluster` members. On the
      postgres backend, --node-id with --advertise-peer and --advertise-http (the addresses
      other members and clients reach it at) make it a member of an elastic cluster instead:
      members register in PostgreSQL and come and go at run time.
      --peer-token-file sets cluster.token (the members' shared secret) from a file.
      --log-level (debug, info, warn, error, off) and --log-format set the config file's
      log.level and log.format: json writes one JSON object per line for log shippers. --check
      validates the configuration and flags, prints a summary and exits (0 when valid)
      without serving.
  weir watch --query NAME [--arg NAME=VALUE]... [--mode full|delta|patch] [--id QUERY_ID]
             [--url ws://HOST:PORT/.cratis/queries/ws] [--frames N]
      Subscribes to a named query on the WebSocket hub and prints each frame as one JSON line
      (Connected included); --frames N stops after N frames.
  weir query-subscribe SPACE [OBJECT] (--dataset NAME | --properties) [--filter JSON]
             [--sort [-]PATH]... [--limit N] [--offset N] [--total] [--projection JSON]
             [--mailbox N] [--url http://HOST:PORT] [--frames N]
      Opens a windowed subscription and prints one JSON object per frame
      ({"event":…,"data":…}), so the stream pipes through jq. OBJECT with --dataset: that
      object's dataset; --dataset alone: the dataset across every object of the space
      (ids OBJECT/ID); --properties: the objects, one row per object. Ends at `closed`.
  weir query SPACE [OBJECT] (--dataset NAME | --properties) [same options]
      The same request as a snapshot: prints {records, total?, hasNext?}.
  weir version
)";

bool split_host_port(const std::string& s, std::string& host, std::uint16_t& port) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos) {
    return false;
  }
  host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  try {
    auto p = std::stoul(s.substr(colon + 1));
    if (p > 65535) {
      return false;
    }
    port = static_cast<std::uint16_t>(p);
  } catch (...) {
    return false;
  }
  return !host.empty();
}

namespace po = boost::program_options;

/// Parses a command's options (and positional arguments into `positional`, when given). On an
/// error prints it as `<cmd>: <error>` with the usage, and returns nullopt. Options must be
/// spelled in full: no abbreviations are guessed.
std::optional<po::variables_map> parse_options(const char* cmd, int argc, char** argv,
                                               const po::options_description& opts,
                                               const char* positional = nullptr) {
  po::positional_options_description pos;
  if (positional != nullptr) {
    pos.add(positional, -1);
  }
  po::variables_map vm;
  try {
    auto style = po::command_line_style::unix_style & ~po::command_line_style::allow_guessing;
    // argv holds the command's arguments only (no program name to skip).
    std::vector<std::string> args(argv, argv + argc);
    po::store(po::command_line_parser(args).options(opts).positional(pos).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << cmd << ": " << e.what() << "\n" << usage;
    return std::nullopt;
  }
  return vm;
}

/// `vm[name]` when it was given.
template <class T>
std::optional<T> given(const po::variables_map& vm, const char* name) {
  if (auto it = vm.find(name); it != vm.end() && !it->second.defaulted()) {
    return it->second.as<T>();
  }
  return std::nullopt;
}

int serve(int argc, char** argv) {
  po::options_description opts;
  opts.add_options()("config", po::value<std::string>())("demo", po::bool_switch())(
      "http", po::value<std::string>())("grpc", po::value<std::string>())(
      "peer", po::value<std::string>())("data-dir", po::value<std::string>())(
      "node-id", po::value<std::string>())("member", po::value<std::vector<std::string>>())(
      "advertise-peer", po::value<std::string>())("advertise-http", po::value<std::string>())(
      "peer-token-file", po::value<std::string>())("log-level", po::value<std::string>())(
      "log-format", po::value<std::string>())("check", po::bool_switch());
  auto vm = parse_options("weir serve", argc, argv, opts);
  if (!vm) {
    return 2;
  }
  auto config_file = given<std::string>(*vm, "config");
  auto http = given<std::string>(*vm, "http");
  auto grpc = given<std::string>(*vm, "grpc");
  auto peer = given<std::string>(*vm, "peer");
  auto data_dir = given<std::string>(*vm, "data-dir");
  auto node_id = given<std::string>(*vm, "node-id");
  auto peer_token_file = given<std::string>(*vm, "peer-token-file");
  auto advertise_peer = given<std::string>(*vm, "advertise-peer");
  auto advertise_http = given<std::string>(*vm, "advertise-http");
  auto log_level = given<std::string>(*vm, "log-level");
  auto log_format = given<std::string>(*vm, "log-format");
  bool demo = (*vm)["demo"].as<bool>();
  bool check = (*vm)["check"].as<bool>();
  std::vector<weir::config::cluster_member> members;
  for (const auto& v :
       given<std::vector<std::string>>(*vm, "member").value_or(std::vector<std::string>{})) {
    auto m = weir::config::parse_member_flag(v);
    if (!m) {
      std::cerr << "weir serve: " << m.error().message << "\n";
      return 2;
    }
    members.push_back(std::move(m.value()));
  }
  auto cfg = config_file ? weir::config::load_config_file(*config_file)
             : demo      ? weir::config::load_config_text(weir::app::demo_config_yaml(), "demo")
                         : weir::config::load_config_text("", "defaults");
  if (!cfg) {
    std::cerr << "weir: " << cfg.error().message << "\n";
    return 1;
  }
  if (log_level) {
    if (!weir::log::parse_level(*log_level)) {
      std::cerr << "weir serve: --log-level wants debug, info, warn, error or off, got '"
                << *log_level << "'\n";
      return 2;
    }
    cfg->log_level = *log_level;
  }
  if (log_format) {
    if (!weir::log::parse_format(*log_format)) {
      std::cerr << "weir serve: --log-format wants text or json, got '" << *log_format << "'\n";
      return 2;
    }
    cfg->log_format = *log_format;
  }
  if (http && !split_host_port(*http, cfg->http_address, cfg->http_port)) {
    std::cerr << "weir serve: --http wants HOST:PORT, got '" << *http << "'\n";
    return 2;
  }
  if (grpc && !split_host_port(*grpc, cfg->grpc_address, cfg->grpc_port)) {
    std::cerr << "weir serve: --grpc wants HOST:PORT, got '" << *grpc << "'\n";
    return 2;
  }
  if (peer && !split_host_port(*peer, cfg->peer_address, cfg->peer_port)) {
    std::cerr << "weir serve: --peer wants HOST:PORT, got '" << *peer << "'\n";
    return 2;
  }
  if (peer_token_file) {
    std::ifstream in{*peer_token_file, std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    auto token = text.str();
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) {
      token.pop_back();
    }
    if (!in || token.size() < 32) {
      std::cerr << "weir serve: --peer-token-file '" << *peer_token_file
                << "' must be a readable file holding a token of at least 32 bytes\n";
      return 2;
    }
    cfg->cluster.token = std::move(token);
  }
  if (data_dir) {
    cfg->data_dir = *data_dir;
  }
  if (const char* url = std::getenv("WEIR_POSTGRES_URL"); url && *url) {
    cfg->postgres_url = url;
  }
  if (node_id) {
    cfg->cluster.node_id = *node_id;
  }
  if (!members.empty()) {
    cfg->cluster.members = std::move(members);
    cfg->cluster.advertise_peer.clear();
    cfg->cluster.advertise_http.clear();
  }
  if (advertise_peer || advertise_http) {
    if (!advertise_peer || !advertise_http) {
      std::cerr << "weir serve: give both --advertise-peer and --advertise-http\n";
      return 2;
    }
    cfg->cluster.advertise_peer = *advertise_peer;
    cfg->cluster.advertise_http = *advertise_http;
    cfg->cluster.members.clear();
  }
  if (auto r = weir::config::validate_cluster(cfg->cluster); !r) {
    std::cerr << "weir serve: cluster: " << r.error().message << "\n";
    return 2;
  }
  if (check) {
    const auto& c = cfg->cluster;
    std::cout << "weir: configuration valid: " << cfg->queries.size() << " queries, "
              << (c.elastic()     ? "member '" + c.node_id + "' (elastic membership)"
                  : c.clustered() ? "member '" + c.node_id + "' of " +
                                        std::to_string(c.members.size()) + " members"
                                  : std::string{"single node"})
              << "\n";
    return 0;
  }
  weir::log::configure(*weir::log::parse_level(cfg->log_level),
                       *weir::log::parse_format(cfg->log_format), cfg->cluster.node_id);
  // Signals are taken by sigwait below, never by an arbitrary thread.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  auto n = weir::app::node::start(std::move(cfg.value()));
  if (!n) {
    // The stable code first (server.bind_failed, store.open_failed, …): what scripts match.
    std::cerr << "weir: " << n.error().code << ": " << n.error().message << "\n";
    return 1;
  }
  auto& node = *n.value();
  {
    // The first words are what scripts and tests wait for (and the bound ports, with port 0).
    std::ostringstream line;
    line << "serving HTTP/WebSocket on " << node.config().http_address << ":" << node.http_port()
         << ", gRPC on " << node.config().grpc_address << ":" << node.grpc_port();
    if (node.peer_port() != 0) {
      line << ", peers on " << node.config().peer_address << ":" << node.peer_port();
    }
    if (node.config().store_backend == "postgres") {
      line << ", records in PostgreSQL";
    } else {
      line << ", data in " << node.config().data_dir;
    }
    weir::log::info(line.str(), {{"version", weir::app::weir_version},
                                 {"backend", node.config().store_backend}});
  }
  std::unique_ptr<weir::app::demo_writer> writer;
  const auto& cl = node.config().cluster;
  // In a cluster one member writes the demo's changes: the smallest id, whatever the order the
  // members are listed in.
  auto writer_id = [&cl] {
    std::string id;
    for (const auto& m : cl.members) {
      if (id.empty() || m.id < id) {
        id = m.id;
      }
    }
    return id;
  };
  if (demo && (!cl.clustered() || cl.node_id == writer_id())) {
    writer = std::make_unique<weir::app::demo_writer>(
        node.runtime(),
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::cerr
        << "weir: demo running; watch it with:\n  weir watch --url ws://"
        << node.config().http_address << ":" << node.http_port()
        << "/.cratis/queries/ws --query Demo.Tasks.ObserveAll --arg board=main --mode delta\n";
  }
  int sig = 0;
  sigwait(&set, &sig);
  weir::log::info("draining", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  writer.reset();
  node.stop();
  weir::log::info("stopped");
  return 0;
}

int watch(int argc, char** argv) {
  weir::app::watch_options o;
  po::options_description opts;
  opts.add_options()("url", po::value(&o.url))("query", po::value(&o.query))(
      "mode", po::value(&o.mode))("id", po::value(&o.query_id))("frames", po::value(&o.frames))(
      "arg", po::value<std::vector<std::string>>());
  auto vm = parse_options("weir watch", argc, argv, opts);
  if (!vm) {
    return 2;
  }
  if (vm->count("frames") && o.frames < 1) {
    std::cerr << "weir watch: --frames wants a positive number\n";
    return 2;
  }
  for (const auto& v :
       given<std::vector<std::string>>(*vm, "arg").value_or(std::vector<std::string>{})) {
    auto eq = v.find('=');
    if (eq == std::string::npos) {
      std::cerr << "weir watch: --arg wants NAME=VALUE\n";
      return 2;
    }
    o.arguments.emplace_back(v.substr(0, eq), v.substr(eq + 1));
  }
  return weir::app::run_watch(o);
}

int windowed(int argc, char** argv, bool subscribe) {
  const char* cmd = subscribe ? "weir query-subscribe" : "weir query";
  weir::app::windowed_options o;
  po::options_description opts;
  opts.add_options()("dataset", po::value(&o.dataset))("filter", po::value(&o.filter))(
      "projection", po::value(&o.projection))("sort", po::value(&o.sort)->composing())(
      "url", po::value(&o.url))("limit", po::value<long long>())("offset", po::value<long long>())(
      "mailbox", po::value<long long>())("frames", po::value(&o.frames))(
      "properties", po::bool_switch(&o.properties))("total", po::bool_switch(&o.total))(
      "positional", po::value<std::vector<std::string>>());
  auto vm = parse_options(cmd, argc, argv, opts, "positional");
  if (!vm) {
    return 2;
  }
  o.limit = given<long long>(*vm, "limit");
  o.offset = given<long long>(*vm, "offset");
  o.mailbox = given<long long>(*vm, "mailbox");
  auto positional =
      given<std::vector<std::string>>(*vm, "positional").value_or(std::vector<std::string>{});
  if (positional.empty() || positional.size() > 2) {
    std::cerr << cmd << ": give SPACE and, for one object's dataset, OBJECT\n" << usage;
    return 2;
  }
  o.space = positional[0];
  if (positional.size() == 2) {
    o.object = positional[1];
  }
  return subscribe ? weir::app::run_query_subscribe(o) : weir::app::run_query(o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << usage;
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "serve") {
    return serve(argc - 2, argv + 2);
  }
  if (cmd == "watch") {
    return watch(argc - 2, argv + 2);
  }
  if (cmd == "query-subscribe") {
    return windowed(argc - 2, argv + 2, true);
  }
  if (cmd == "query") {
    return windowed(argc - 2, argv + 2, false);
  }
  if (cmd == "version" || cmd == "--version") {
    std::cout << "weir " << weir::app::weir_version << "\n";
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << usage;
    return 0;
  }
  std::cerr << "weir: unknown command '" << cmd << "'\n" << usage;
  return 2;
}
