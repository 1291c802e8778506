// unit_loader: the threads that read and build units for their shards.
#include "actors/unit_loader.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <limits>

#include <caf/logger.hpp>
#include <caf/send.hpp>

#include "actors/messages.hpp"
#include "core/document_check.hpp"
#include "core/json_scan.hpp"
#include "core/record_rules.hpp"
#include "log/log.hpp"

namespace weir::actors {

unit_loader::unit_loader(store::durable_store& store, const core::document_limits& limits,
                         skipped_rows& skipped)
    : store_(store), limits_(limits), skipped_(skipped) {
  if (!store_.shared_with_others()) {
    constexpr auto any = std::numeric_limits<std::size_t>::max();
    limits_ = core::document_limits{any, any, any};
  }
  for (std::size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { run(); });
  }
}

unit_loader::~unit_loader() {
  stop();
}

void unit_loader::load(store::unit_key unit, load_client shard) {
  {
    std::lock_guard lock{mu_};
    if (stopping_) {
      return;
    }
    queue_.push_back(job{std::move(unit), std::move(shard), nullptr});
  }
  cv_.notify_one();
}

void unit_loader::post(std::function<void()> run) {
  {
    std::lock_guard lock{mu_};
    if (stopping_) {
      return;
    }
    queue_.push_back(job{{}, {}, std::move(run)});
  }
  cv_.notify_one();
}

void unit_loader::stop() {
  {
    std::lock_guard lock{mu_};
    if (stopping_ && threads_.empty()) {
      return;
    }
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) {
      t.join();
    }
  }
  threads_.clear();
}

void unit_loader::run() {
  // Unprivileged: a thread may always lower its own priority.
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice) != 0) {
    log::warn("could not lower a loader thread's CPU priority", {{"nice", nice}});
  }
  for (;;) {
    job next;
    {
      std::unique_lock lock{mu_};
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) {
        break;
      }
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    if (next.run) {
      next.run();
      continue;
    }
    auto& job = next;
    auto out = std::make_shared<unit_load>();
    auto T0 = std::chrono::steady_clock::now();
    bool objects_unit = job.unit.object.empty();
    core::record_set* current = nullptr;
    std::string current_name;
    auto snap = store_.load_unit(
        job.unit, [&](std::string_view dataset, std::string_view id, std::string&& json) {
          if (out->error) {
            return;
          }
          if (!current || dataset != current_name) {
            current_name = std::string{dataset};
            current = &out->datasets[current_name];
          }
          auto skip = [&](const core::error& why) {
            skipped_.add({job.unit.space, job.unit.object, std::string{dataset}, std::string{id},
                          why.code, why.message, 0});
            log::warn("a unit's load skipped a record the store holds but Weir cannot serve",
                      {{"space", job.unit.space},
                       {"object", job.unit.object},
                       {"dataset", dataset},
                       {"id", id},
                       {"code", why.code},
                       {"error", why.message}});
          };
          // A SAX pass (no document is built) before anything reads the text: a row deeper than
          // any reader reads, or holding a number JSON cannot carry, is never served.
          if (auto ok = core::check_document_text(json, limits_); !ok) {
            skip(ok.error());
            return;
          }
          if (auto ok = core::validate_id(id, "id"); !ok) {
            skip(ok.error());
            return;
          }
          // Only its id and identity are read (no document is built), and the text is moved.
          if (objects_unit) {
            if (auto m = core::scan_path(json, {std::string{"modifiedAt"}}); m && !m->empty()) {
              std::int64_t v = 0;
              auto [ptr, ec] = std::from_chars(m->data(), m->data() + m->size(), v);
              if (ec == std::errc{} && ptr == m->data() + m->size()) {
                out->last_modified_ms = std::max(out->last_modified_ms, v);
              }
            }
          }
          auto rec = core::record_from_text(std::move(json));
          if (!rec || rec->id != id) {
            // A document that does not carry its row's id (another program wrote it): the
            // row's key decides, as in change capture.
            auto doc = core::parse_document(rec ? rec->json : json, limits_);
            if (doc && doc->is_object()) {
              doc->as_object().erase("id");
            }
            auto fixed = doc ? core::normalize_record(std::move(doc.value()), id)
                             : core::result<boost::json::object>{std::move(doc).error()};
            if (!fixed) {
              skip(fixed.error());
              return;
            }
            rec = core::make_record(fixed.value());
          }
          current->insert(std::move(rec));
        });
    if (!snap) {
      out->error = std::move(snap).error();
    } else if (!out->error) {
      out->seq = snap->seq;
      out->deleted = snap->deleted;
      out->keys = std::move(snap->keys);
    }
    if (out->error) {
      out->datasets.clear();
    }
    // Reading a big unit churns through the heap (RocksDB blocks, parser buffers): give what
    // is free back to the system, so a node's memory follows what it holds. Not under
    // AddressSanitizer, whose allocator replaces glibc's: glibc's malloc_trim then walks arenas
    // it never set up, and two loader threads trimming at once crashed in it (seen when a
    // cross-unit batch loaded units side by side).
#ifndef __SANITIZE_ADDRESS__
    malloc_trim(0);
#endif
    if (auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0)
                      .count();
        ms >= 500 && !out->error) {
      // Big units are worth knowing about: their first use waits this long.
      std::size_t n = 0;
      for (auto& [name, records] : out->datasets) {
        n += records.size();
      }
      log::info(
          "loaded a large unit",
          {{"space", job.unit.space}, {"object", job.unit.object}, {"records", n}, {"ms", ms}});
    }
    caf::anon_send(job.shard, loaded_msg{std::move(out)});
    job.shard = nullptr;
  }
  // This thread sent messages through CAF; let the actor system go without waiting on it.
  caf::logger::set_current_actor_system(nullptr);
}

}  // namespace weir::actors
