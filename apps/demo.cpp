// The demo: queries over a task board, bank accounts and a chat room in space "demo", seeded
// once, then a writer that flips a task's state, moves money and posts a chat line each tick
// (the room keeps its last 500 lines: a history for windowed subscriptions to page through),
// and keeps the main board's own document current (task counts, the last changes): a single
// document that changes a little each tick, for the `patch` mode and the AG-UI state stream.
#include "apps/demo.hpp"

#include <chrono>
#include <condition_variable>
#include <future>
#include <random>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "actors/cluster_link.hpp"
#include "actors/runtime.hpp"

namespace weir::app {

std::string_view demo_config_yaml() {
  return R"yaml(# Weir's built-in demo configuration (weir serve --demo).
node:
  http: "127.0.0.1:8080"
  grpc: "127.0.0.1:9090"
  dataDir: ./weir-demo-data
queries:
  - name: Demo.Tasks.ObserveByState
    route: /api/demo/tasks/by-state
    space: demo
    object: "{board}"
    dataset: tasks
    filter: { state: "{state}" }
    sort: ["title"]
    arguments: { board: string, state: string }
  - name: Demo.Tasks.ObserveAll
    route: /api/demo/tasks
    space: demo
    object: "{board}"
    dataset: tasks
    sort: ["title"]
    arguments: { board: string }
  - name: Demo.Boards.ObserveBoard
    route: /api/demo/boards/one
    space: demo
    object: "{board}"
    arguments: { board: string }
  - name: Demo.Boards.ObserveAll
    route: /api/demo/boards
    space: demo
    sort: ["name"]
  - name: Demo.Accounts.ObserveAbove
    route: /api/demo/accounts/above
    space: demo
    object: bank
    dataset: accounts
    filter: { balance: { $gte: "{minimum}" } }
    sort: ["-balance"]
    arguments: { minimum: number }
  - name: Demo.Chat.ObserveMessages
    route: /api/demo/chat
    space: demo
    object: "{room}"
    dataset: messages
    sort: ["-_ver.id"]
    arguments: { room: string }
)yaml";
}

namespace {

/// Submits a write and waits for its answer (the demo writer is its own thread).
void write_sync(actors::runtime& rt, actors::write_command cmd) {
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  rt.submit(std::move(cmd), [done](core::result<actors::write_outcome>) { done->set_value(); });
  fut.wait_for(std::chrono::seconds{10});
}

actors::write_command put(std::string object, std::string dataset, std::string id,
                          std::string_view json) {
  actors::write_command c;
  c.kind = dataset.empty() ? actors::write_kind::put_object : actors::write_kind::put_record;
  c.space = "demo";
  c.object = std::move(object);
  c.dataset = std::move(dataset);
  c.id = std::move(id);
  c.body = boost::json::parse(json);
  return c;
}

constexpr const char* states[] = {"todo", "doing", "done"};
constexpr const char* people[] = {"ada", "grace", "linus", "barbara", "ken"};
constexpr const char* lines[] = {"shipping it",          "who broke main?", "LGTM",     "coffee?",
                                 "deploying to staging", "rolled back",     "all green"};

}  // namespace

demo_writer::demo_writer(actors::runtime& rt, std::uint64_t seed, std::int64_t period_ms)
    : rt_(rt), thread_([this, seed, period_ms] { run(seed, period_ms); }) {}

demo_writer::~demo_writer() {
  stop_ = true;
  if (thread_.joinable()) {
    thread_.join();
  }
}

void demo_writer::run(std::uint64_t seed, std::int64_t period_ms) {
  std::mt19937_64 rng{seed};
  // In a cluster the demo's units are spread over the members: seed once every member is up
  // (for at most 30 s), or the seeding writes would get 503 from members still starting.
  for (int i = 0; i < 300 && !stop_ && rt_.cluster() && rt_.cluster()->health().first != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  // The main board's document: its task counts and its last 10 changes (id-keyed, newest
  // first), rewritten as the tasks change.
  std::vector<std::string> task_state;
  boost::json::array activity;
  std::uint64_t change = 0;
  auto board = [&] {
    boost::json::object counts{{"todo", 0}, {"doing", 0}, {"done", 0}};
    for (const auto& st : task_state) {
      counts[st] = counts[st].as_int64() + 1;
    }
    return boost::json::serialize(boost::json::object{{"name", "Main board"},
                                                      {"owner", "ada"},
                                                      {"counts", std::move(counts)},
                                                      {"changes", change},
                                                      {"activity", activity}});
  };
  write_sync(rt_, put("ops", "", "", R"({"name":"Ops board","owner":"grace"})"));
  const char* titles[] = {"Write docs", "Fix login",   "Add metrics", "Tune RocksDB",
                          "Review PR",  "Plan sprint", "Upgrade CAF", "Load test"};
  for (int i = 0; i < 8; ++i) {
    auto id = "t" + std::to_string(i + 1);
    boost::json::object t{
        {"id", id}, {"title", titles[i]}, {"state", states[i % 3]}, {"assignee", people[i % 5]}};
    write_sync(rt_, put("main", "tasks", id, boost::json::serialize(t)));
    task_state.emplace_back(states[i % 3]);
  }
  write_sync(rt_, put("main", "", "", board()));
  for (int i = 0; i < 5; ++i) {
    auto id = std::string{"acct-"} + people[i];
    boost::json::object a{{"id", id}, {"name", people[i]}, {"balance", 100 * (i + 1)}};
    write_sync(rt_, put("bank", "accounts", id, boost::json::serialize(a)));
  }
  // The chat room: a history worth windowing (200 lines at start, up to 500 kept), written as
  // this run's messages so a restart on old data adds to it instead of overwriting it.
  write_sync(rt_, put("lobby", "", "", R"({"name":"Lobby","kind":"room"})"));
  auto run_id = std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
  auto message = [&](std::uint64_t n) {
    return boost::json::object{{"id", "m-" + run_id + "-" + std::to_string(n)},
                               {"from", people[rng() % 5]},
                               {"text", lines[rng() % 7]}};
  };
  constexpr std::uint64_t history = 200, kept = 500;
  {
    boost::json::array seed_lines;
    for (std::uint64_t n = 1; n <= history; ++n) {
      seed_lines.push_back(message(n));
    }
    actors::write_command c;
    c.kind = actors::write_kind::batch;
    c.space = "demo";
    c.object = "lobby";
    c.dataset = "messages";
    c.body = boost::json::object{{"upsert", std::move(seed_lines)}};
    write_sync(rt_, std::move(c));
  }
  std::uint64_t msg = history;
  while (!stop_) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds{period_ms};
    {
      auto task = rng() % 8;
      auto id = "t" + std::to_string(task + 1);
      const char* state = states[rng() % 3];
      actors::write_command c;
      c.kind = actors::write_kind::patch_record;
      c.space = "demo";
      c.object = "main";
      c.dataset = "tasks";
      c.id = id;
      c.body = boost::json::object{{"$set", boost::json::object{{"state", state}}}};
      write_sync(rt_, std::move(c));
      task_state[task] = state;
      ++change;
      activity.insert(activity.begin(), boost::json::object{{"id", "c" + std::to_string(change)},
                                                            {"task", id},
                                                            {"state", state},
                                                            {"by", people[rng() % 5]}});
      if (activity.size() > 10) {
        activity.pop_back();
      }
      write_sync(rt_, put("main", "", "", board()));
    }
    {
      actors::write_command c;
      c.kind = actors::write_kind::patch_record;
      c.space = "demo";
      c.object = "bank";
      c.dataset = "accounts";
      c.id = std::string{"acct-"} + people[rng() % 5];
      c.body = boost::json::object{
          {"$inc", boost::json::object{{"balance", static_cast<std::int64_t>(rng() % 101) - 50}}}};
      write_sync(rt_, std::move(c));
    }
    {
      ++msg;
      auto m = message(msg);
      actors::write_command c;
      c.kind = actors::write_kind::batch;
      c.space = "demo";
      c.object = "lobby";
      c.dataset = "messages";
      boost::json::object body{{"upsert", boost::json::array{m}}};
      if (msg > kept) {
        body["delete"] = boost::json::array{
            boost::json::string{"m-" + run_id + "-" + std::to_string(msg - kept)}};
      }
      c.body = std::move(body);
      write_sync(rt_, std::move(c));
    }
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
  }
}

}  // namespace weir::app
