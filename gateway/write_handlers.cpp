// The write API's routes: records, property documents and objects under `/v1/spaces/…`, and
// the cross-unit batch, each applied through runtime::submit with its answer queued in request
// order (pipelined writes to one unit are read ahead, http_session.cpp). http_session members;
// the route table is http_routes.cpp, the pure request → command mapping write_api.cpp and
// cross_unit_batch.cpp.
#include <algorithm>
#include <atomic>
#include <cassert>

#include <boost/json/serialize.hpp>

#include "actors/runtime.hpp"
#include "core/idempotency_key.hpp"
#include "core/record_rules.hpp"
#include "gateway/cross_unit_batch.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/http_session.hpp"
#include "gateway/write_api.hpp"
#include "log/log.hpp"

namespace weir::gateway {

bool http_session::read_idempotency_key(const http::request<http::string_body>& req,
                                        std::string& key) {
  auto keys = req.count("Idempotency-Key");
  if (keys == 0) {
    return true;
  }
  auto text = std::string_view{req["Idempotency-Key"]};
  auto ok =
      keys > 1
          ? core::result<void>{core::make_error("request.invalid_idempotency_key",
                                                "send one Idempotency-Key header, not several")}
          : core::check_idempotency_key(text);
  if (!ok) {
    respond(400, error_body(ok.error()));
    return false;
  }
  key = std::string{text};
  return true;
}

void http_session::serve_write(http::request<http::string_body>& req, route_match& m) {
  // The route's checks (Origin, credentials, the space's write rule, draining) are done.
  auto cmd = std::move(m.write->cmd);
  if (!read_idempotency_key(req, cmd.idempotency_key)) {
    return;
  }
  if (req.method() == http::verb::patch) {
    // PATCH takes an RFC 6902 JSON Patch (application/json-patch+json) on a record or an
    // object's property document, and Weir's own {$set, $unset, …} body on a record.
    auto type = header(req, http::field::content_type).value_or(std::string_view{});
    auto media = type.substr(0, type.find(';'));
    while (!media.empty() && media.back() == ' ') {
      media.remove_suffix(1);
    }
    bool json_patch = beast::iequals(media, "application/json-patch+json");
    if (json_patch && cmd.kind == actors::write_kind::patch_record) {
      cmd.kind = actors::write_kind::json_patch_record;
    } else if (!json_patch && cmd.kind == actors::write_kind::json_patch_object) {
      respond(415, error_body(core::make_error(
                       "request.unsupported_media_type",
                       "PATCH on an object takes an RFC 6902 JSON Patch: send it as "
                       "Content-Type: application/json-patch+json",
                       {{"accepted", "application/json-patch+json"}})));
      return;
    }
  }
  bool needs_body = cmd.kind != actors::write_kind::delete_object &&
                    cmd.kind != actors::write_kind::delete_record;
  if (needs_body) {
    auto body = parse_body(req.body());
    if (!body) {
      respond(400, error_body(body.error()));
      return;
    }
    cmd.body = std::move(body.value());
  }
  dispatch_write(std::move(cmd));
}

void http_session::serve_cross_unit_batch(http::request<http::string_body>& req, route_match& m) {
  const auto& space = m.space;
  if (auto ok = core::validate_id(space, "space"); !ok) {
    respond(400, error_body(ok.error()));
    return;
  }
  if (refuse_if_draining()) {
    return;
  }
  std::string key;
  if (!read_idempotency_key(req, key)) {
    return;
  }
  auto body = parse_body(req.body());
  if (!body) {
    respond(400, error_body(body.error()));
    return;
  }
  auto writes = parse_cross_unit_batch(space, std::move(body.value()), key, ctx_.rt.record_limits(),
                                       ctx_.rt.store_holds_nul_characters());
  if (!writes) {
    respond(status_for(writes.error()), error_body(writes.error()));
    return;
  }
  dispatch_batch(std::move(writes.value()));
}

void http_session::dispatch_batch(std::vector<actors::write_command> writes) {
  // Its writes go to several units, so nothing read after it may be applied before its answer.
  // (parse_cross_unit_batch never gives none: the last answer writes the answer.)
  assert(!writes.empty());
  follow_unit_.reset();
  auto& slot = answers_.emplace_back();
  struct gather {
    std::vector<std::optional<core::result<actors::write_outcome>>> outcomes;
    std::atomic<std::size_t> left;
  };
  auto g = std::make_shared<gather>();
  g->outcomes.resize(writes.size());
  g->left = writes.size();
  auto self = shared_from_this();
  auto finish = [self, g, &slot, version = version_, keep = keep_alive_,
                 correlation = correlation_]() {
    bool replayed = std::all_of(g->outcomes.begin(), g->outcomes.end(),
                                [](const auto& o) { return o && *o && (*o)->replayed; });
    auto body = cross_unit_batch_answer(g->outcomes);
    asio::post(self->stream_.get_executor(), [self, &slot, version, keep, correlation, replayed,
                                              body = std::move(body)]() mutable {
      self->fill_answer(slot, version, keep, correlation, 200, std::move(body), replayed);
    });
  };
  for (std::size_t i = 0; i < writes.size(); ++i) {
    // Checked as a whole by parse_cross_unit_batch; each answer fills its own place, and the
    // last one (on whichever actor thread) writes the answer.
    ctx_.rt.submit_checked(std::move(writes[i]),
                           [g, i, finish](core::result<actors::write_outcome> r) {
                             g->outcomes[i] = std::move(r);
                             if (g->left.fetch_sub(1) == 1) {
                               finish();
                             }
                           });
  }
}

void http_session::dispatch_write(actors::write_command cmd) {
  // Another request may be read before this one is answered only when the next one can be
  // applied after it without waiting: a keep-alive HTTP/1.1 connection whose writes all go to
  // one local unit, whose shard takes them in the order they come.
  std::optional<std::string> unit;
  if (keep_alive_ && version_ >= 11) {
    unit = ctx_.rt.ordered_unit(cmd);
  }
  auto& slot = answers_.emplace_back();
  auto self = shared_from_this();
  ctx_.rt.submit(std::move(cmd),
                 [self, &slot, version = version_, keep = keep_alive_,
                  correlation = correlation_](core::result<actors::write_outcome> r) mutable {
                   // Called once (runtime::submit answers each write once): the id moves on.
                   asio::post(self->stream_.get_executor(),
                              [self, &slot, version, keep, correlation = std::move(correlation),
                               r = std::move(r)]() mutable {
                                self->answer_write(slot, version, keep, correlation, std::move(r));
                              });
                 });
  if (unit && (answers_.size() == 1 || follow_unit_ == unit)) {
    follow_unit_ = std::move(unit);
    read_ahead();
  } else {
    follow_unit_.reset();
  }
}

void http_session::answer_write(std::optional<http::response<http::string_body>>& slot,
                                unsigned version, bool keep_alive, const std::string& correlation,
                                core::result<actors::write_outcome> r) {
  unsigned status = 200;
  std::string body;
  bool replayed = false;
  if (r) {
    boost::json::object o;
    o["versionId"] = r->version_id;
    replayed = r->replayed;
    body = boost::json::serialize(o);
  } else {
    status = status_for(r.error());
    body = error_body(r.error());
    log::info("request refused", {{"status", status},
                                  {"code", r.error().code},
                                  {"correlation", correlation},
                                  {"remote", remote_}});
  }
  fill_answer(slot, version, keep_alive, correlation, status, std::move(body), replayed);
}

void http_session::fill_answer(std::optional<http::response<http::string_body>>& slot,
                               unsigned version, bool keep_alive, const std::string& correlation,
                               unsigned status, std::string body, bool replayed) {
  auto& res = slot.emplace();
  res.version(version);
  res.result(status);
  res.set(http::field::server, "weir");
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.set("X-Correlation-ID", correlation);
  if (replayed) {
    res.set("Idempotency-Replayed", "true");
  }
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  pump();
}

}  // namespace weir::gateway
