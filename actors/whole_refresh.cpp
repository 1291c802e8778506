// Whole-dataset refreshes for change capture, on the node's whole refresh lane
// (whole_refresh.hpp).
#include "actors/whole_refresh.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_set>

#include <boost/json.hpp>

#include "actors/messages.hpp"
#include "log/log.hpp"

namespace weir::actors {

namespace {

/// Refresh commands run one after another through the registry: the next one is made only when
/// the one before was applied, so a whole dataset costs one chunk's read and memory at a time
/// in the store's queue. A step answered inside its own call goes on in the same loop rather
/// than recursing (a unit no longer held answers at once, for every chunk).
class refresh_sequence : public std::enable_shared_from_this<refresh_sequence> {
 public:
  /// Makes the next command and its unit; false when none is left.
  using make_fn = std::function<bool(store::unit_key&, write_command&)>;

  refresh_sequence(runtime::impl& rt, make_fn make, write_callback done)
      : rt_(rt), make_(std::move(make)), done_(std::move(done)) {}

  void run() {
    for (;;) {
      store::unit_key unit;
      write_command cmd;
      if (!make_(unit, cmd)) {
        done_(write_outcome{});
        return;
      }
      {
        std::lock_guard lock{mu_};
        in_call_ = true;
        answered_ = false;
      }
      rt_.refresh_local(unit, std::move(cmd),
                        [self = shared_from_this()](core::result<write_outcome> r) {
                          self->on_step(std::move(r));
                        });
      std::optional<core::error> failed;
      {
        std::lock_guard lock{mu_};
        in_call_ = false;
        if (!answered_) {
          return;  // on_step goes on when it comes
        }
        failed = std::move(failed_);
      }
      if (failed) {
        done_(std::move(*failed));
        return;
      }
    }
  }

 private:
  void on_step(core::result<write_outcome> r) {
    std::optional<core::error> failed;
    {
      std::lock_guard lock{mu_};
      if (!r) {
        failed_ = std::move(r).error();
      }
      if (in_call_) {
        answered_ = true;  // run()'s loop goes on
        return;
      }
      failed = std::move(failed_);
    }
    if (failed) {
      done_(std::move(*failed));
      return;
    }
    run();
  }

  runtime::impl& rt_;
  make_fn make_;
  write_callback done_;
  std::mutex mu_;
  bool in_call_ = false;
  bool answered_ = false;
  std::optional<core::error> failed_;
};

using id_list = std::vector<std::pair<std::string, std::string>>;

/// On a loader thread: the store's ids of `dataset` of `unit` with `held`, refreshed in chunks.
void refresh_ids(runtime::impl& rt, const store::unit_key& unit, const std::string& dataset,
                 id_list held, write_callback done) {
  auto ids = std::make_shared<id_list>(std::move(held));
  // What the store holds now: rows the transaction added that the shard has never seen, with
  // the ones it still has (those the transaction removed are among the shard's). A whole unit
  // read, its documents dropped as they come: rare enough not to need a query of its own.
  auto read =
      rt.store.load_unit(unit, [&](std::string_view ds, std::string_view id, std::string&&) {
        if (dataset.empty() || ds == dataset) {
          ids->emplace_back(ds, id);
        }
      });
  if (!read) {
    done(std::move(read).error());
    return;
  }
  std::sort(ids->begin(), ids->end());
  ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
  auto at = std::make_shared<std::size_t>(0);
  auto make = [ids, at, unit](store::unit_key& u, write_command& cmd) {
    if (*at >= ids->size()) {
      return false;
    }
    u = unit;
    cmd.kind = write_kind::refresh_records;
    cmd.space = unit.space;
    cmd.object = unit.object;
    cmd.dataset = (*ids)[*at].first;
    boost::json::array chunk;
    while (*at < ids->size() && chunk.size() < ids_per_refresh &&
           (*ids)[*at].first == cmd.dataset) {
      chunk.emplace_back((*ids)[*at].second);
      ++*at;
    }
    cmd.body = std::move(chunk);
    return true;
  };
  std::make_shared<refresh_sequence>(rt, std::move(make), std::move(done))->run();
}

}  // namespace

/// Answers a lane job once: with the chunks' outcome, or, when every copy of the callback is
/// gone unanswered (a shard that died with the request in its mailbox), with a failure, so the
/// lane never waits for good.
class lane_answer {
 public:
  explicit lane_answer(write_callback fn) : fn_(std::move(fn)) {}
  lane_answer(const lane_answer&) = delete;
  lane_answer& operator=(const lane_answer&) = delete;
  ~lane_answer() {
    if (!answered_.exchange(true)) {
      fn_(core::make_error("server.unavailable", "the unit's shard ended before the refresh"));
    }
  }
  void answer(core::result<write_outcome> r) {
    if (!answered_.exchange(true)) {
      fn_(std::move(r));
    }
  }

 private:
  write_callback fn_;
  std::atomic<bool> answered_{false};
};

/// The node's whole refreshes, run one at a time in the order asked for; one asked for again
/// while it waits is not queued twice (it has not read anything yet); a failed one goes to the
/// back and the lane waits a second before the next. A job asks the unit's shard for the ids
/// it holds when it starts (so they are current, and only one unit's are copied at a time); a
/// unit no longer held here is done at once.
class whole_refresh_lane : public timed_target,
                           public std::enable_shared_from_this<whole_refresh_lane> {
 public:
  explicit whole_refresh_lane(runtime::impl& rt) : rt_(rt) {}

  void add(store::unit_key unit, std::string dataset) {
    {
      std::lock_guard lock{mu_};
      if (queued_.count(key_of(unit, "")) || queued_.count(key_of(unit, dataset))) {
        return;  // not started yet: it reads the unit after this transaction too
      }
      queued_.insert(key_of(unit, dataset));
      pending_.push_back({std::move(unit), std::move(dataset)});
      if (running_ || waiting_) {
        return;
      }
      running_ = true;
    }
    start_next();
  }

  void on_timer() override {
    {
      std::lock_guard lock{mu_};
      waiting_ = false;
      if (running_) {
        return;
      }
      running_ = true;
    }
    start_next();
  }

 private:
  struct job {
    store::unit_key unit;
    std::string dataset;
  };

  static std::string key_of(const store::unit_key& unit, const std::string& dataset) {
    return unit.space + '\0' + unit.object + '\0' + dataset;
  }

  // With running_ set: starts the front job, or clears running_ when there is none.
  void start_next() {
    job j;
    {
      std::lock_guard lock{mu_};
      if (pending_.empty() || rt_.stopping) {
        running_ = false;
        return;
      }
      j = std::move(pending_.front());
      pending_.pop_front();
      queued_.erase(key_of(j.unit, j.dataset));
    }
    // Weak: an answer that comes after the runtime (the lane's only owner) is gone does nothing.
    auto answer =
        std::make_shared<lane_answer>([weak = weak_from_this(), j](core::result<write_outcome> r) {
          if (auto lane = weak.lock()) {
            lane->finished(j, r);
          }
        });
    auto cmd = whole_refresh_command(j.unit.space, j.unit.object, j.dataset);
    cmd.body.as_object()["now"] = true;
    rt_.refresh_local(j.unit, std::move(cmd),
                      [answer](core::result<write_outcome> r) { answer->answer(std::move(r)); });
  }

  void finished(const job& j, const core::result<write_outcome>& r) {
    if (r) {
      // The next one from a loader thread: a unit no longer held answers inside refresh_local,
      // and a long run of them must not recurse.
      rt_.loader.post([self = shared_from_this()] { self->start_next(); });
      return;
    }
    log::warn(
        "change capture: a unit could not be read again whole; it goes to the back of "
        "the queue, which pauses 1 s",
        {{"space", j.unit.space},
         {"object", j.unit.object},
         {"dataset", j.dataset},
         {"code", r.error().code},
         {"error", r.error().message}});
    {
      std::lock_guard lock{mu_};
      if (!queued_.count(key_of(j.unit, j.dataset))) {
        queued_.insert(key_of(j.unit, j.dataset));
        pending_.push_back(j);
      }
      running_ = false;
      waiting_ = true;
    }
    rt_.call_after(std::chrono::seconds{1}, weak_from_this());
  }

  runtime::impl& rt_;
  std::mutex mu_;
  std::deque<job> pending_;
  std::unordered_set<std::string> queued_;  // pending_'s keys
  bool running_ = false;  // a job is being refreshed (or its next is being started)
  bool waiting_ = false;  // after a failure: the timer starts the next
};

std::shared_ptr<whole_refresh_lane> make_whole_refresh_lane(runtime::impl& rt) {
  return std::make_shared<whole_refresh_lane>(rt);
}

void refresh_whole(runtime::impl& rt, store::unit_key unit, std::string dataset) {
  rt.whole_refreshes->add(std::move(unit), std::move(dataset));
}

bool is_whole_refresh_now(const write_command& cmd) {
  if (!is_whole_refresh(cmd)) {
    return false;
  }
  const auto* n = cmd.body.as_object().if_contains("now");
  return n && n->is_bool() && n->get_bool();
}

void run_whole_refresh(runtime::impl& rt, store::unit_key unit, std::string dataset,
                       std::vector<std::pair<std::string, std::string>> held, write_callback done) {
  rt.loader.post([&rt, unit = std::move(unit), dataset = std::move(dataset), held = std::move(held),
                  done = std::move(done)]() mutable {
    refresh_ids(rt, unit, dataset, std::move(held), std::move(done));
  });
}

void refresh_every_held_unit(runtime::impl& rt) {
  std::vector<store::unit_key> units;
  for (auto& s : rt.stripes) {
    std::lock_guard lock{s.mu};
    for (const auto& [key, entry] : s.shards) {
      if (entry.owner.empty()) {
        auto sep = key.find('\0');
        units.push_back({key.substr(0, sep), key.substr(sep + 1)});
      }
    }
  }
  for (auto& u : units) {
    rt.whole_refreshes->add(std::move(u), "");
  }
}

write_command whole_refresh_command(std::string space, std::string object, std::string dataset) {
  write_command cmd;
  cmd.kind = write_kind::refresh_records;
  cmd.space = std::move(space);
  cmd.object = std::move(object);
  cmd.dataset = std::move(dataset);
  cmd.body = boost::json::object{{"whole", true}};
  return cmd;
}

write_command every_held_unit_command() {
  write_command cmd;
  cmd.kind = write_kind::refresh_records;
  cmd.body = boost::json::object{{"everyHeldUnit", true}};
  return cmd;
}

}  // namespace weir::actors
