// unit_loader: one thread that reads and builds units for their shards.
#include "actors/unit_loader.hpp"

#include <algorithm>

#include <caf/logger.hpp>
#include <caf/send.hpp>

#include "actors/messages.hpp"

namespace weir::actors {

unit_loader::unit_loader(store::durable_store& store) : store_(store) {
  thread_ = std::thread([this] { run(); });
}

unit_loader::~unit_loader() {
  stop();
}

void unit_loader::load(store::unit_key unit, caf::actor shard) {
  {
    std::lock_guard lock{mu_};
    if (stopping_) {
      return;
    }
    queue_.emplace_back(std::move(unit), std::move(shard));
  }
  cv_.notify_one();
}

void unit_loader::stop() {
  {
    std::lock_guard lock{mu_};
    if (stopping_ && !thread_.joinable()) {
      return;
    }
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void unit_loader::run() {
  for (;;) {
    std::pair<store::unit_key, caf::actor> job;
    {
      std::unique_lock lock{mu_};
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) {
        break;
      }
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    auto out = std::make_shared<unit_load>();
    auto snap = store_.load_unit(job.first);
    if (!snap) {
      out->error = std::move(snap).error();
    } else {
      out->seq = snap->seq;
      out->deleted = snap->deleted;
      bool objects_unit = job.first.object.empty();
      boost::json::object doc;
      for (auto& r : snap->records) {
        auto rec = core::parse_record(r.json, objects_unit ? &doc : nullptr);
        if (rec && objects_unit) {
          if (auto* m = doc.if_contains("modifiedAt"); m && m->is_int64()) {
            out->last_modified_ms = std::max(out->last_modified_ms, m->get_int64());
          }
        }
        if (!rec || rec->id != r.id) {
          core::error e = core::make_error(
              "store.corrupt", "unit '" + job.first.space + "/" + job.first.object +
                                   "' holds an unreadable record '" + r.dataset + "/" + r.id + "'");
          out->error = std::move(e);
          break;
        }
        out->datasets[r.dataset].insert(std::move(rec));
      }
      snap->records.clear();
    }
    caf::anon_send(job.second, loaded_msg{std::move(out)});
    job.second = nullptr;
  }
  // This thread sent messages through CAF; let the actor system go without waiting on it.
  caf::logger::set_current_actor_system(nullptr);
}

}  // namespace weir::actors
