// Whole-dataset refreshes for change capture (whole_refresh.hpp).
#include "actors/whole_refresh.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include <boost/json.hpp>

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
    {
      std::lock_guard lock{mu_};
      if (!r) {
        failed_ = std::move(r).error();
      }
      if (in_call_) {
        answered_ = true;  // run()'s loop goes on
        return;
      }
    }
    if (!r) {
      std::optional<core::error> failed;
      {
        std::lock_guard lock{mu_};
        failed = std::move(failed_);
      }
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

}  // namespace

write_command whole_refresh_command(std::string space, std::string object, std::string dataset) {
  write_command cmd;
  cmd.kind = write_kind::refresh_records;
  cmd.space = std::move(space);
  cmd.object = std::move(object);
  cmd.dataset = std::move(dataset);
  cmd.body = boost::json::object{{"whole", true}};
  return cmd;
}

void refresh_whole(runtime::impl& rt, const store::unit_key& unit, const std::string& dataset,
                   std::vector<std::pair<std::string, std::string>> held, write_callback done) {
  auto ids = std::make_shared<std::vector<std::pair<std::string, std::string>>>(std::move(held));
  // What the store holds now: rows the transaction added that the shard has never seen, with
  // the ones it still has (those the transaction removed are among the shard's).
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

void refresh_every_held_unit(runtime::impl& rt, write_callback done) {
  auto units = std::make_shared<std::vector<store::unit_key>>();
  for (auto& s : rt.stripes) {
    std::lock_guard lock{s.mu};
    for (const auto& [key, entry] : s.shards) {
      if (entry.owner.empty()) {
        auto sep = key.find('\0');
        units->push_back({key.substr(0, sep), key.substr(sep + 1)});
      }
    }
  }
  auto at = std::make_shared<std::size_t>(0);
  auto make = [units, at](store::unit_key& u, write_command& cmd) {
    if (*at >= units->size()) {
      return false;
    }
    u = (*units)[(*at)++];
    cmd = whole_refresh_command(u.space, u.object, "");
    return true;
  };
  std::make_shared<refresh_sequence>(rt, std::move(make), std::move(done))->run();
}

}  // namespace weir::actors
