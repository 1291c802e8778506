// weir::gateway::http_session — one HTTP/1.1 connection: reads requests (bounded body), routes
// them through the route table (http_route.hpp; the table in http_routes.cpp, the handlers in
// one file per protocol family) and writes their answers in request order. Pipelined
// writes to one unit are applied without waiting for each other's answers (RFC 9112 §9.3.2: in
// order, answers in order); any other request waits until every answer before it is written.
// Internal.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "actors/direct_query.hpp"
#include "actors/frame_sink.hpp"
#include "actors/runtime.hpp"
#include "actors/windowed_query.hpp"
#include "core/query_definition.hpp"
#include "core/space_rules.hpp"
#include "gateway/beast.hpp"
#include "gateway/http_route.hpp"
#include "gateway/request_identity.hpp"
#include "gateway/server_context.hpp"
#include "gateway/state_routes.hpp"
#include "gateway/windowed_routes.hpp"

namespace weir::gateway {

struct ui_asset;

class http_session : public std::enable_shared_from_this<http_session> {
 public:
  http_session(tcp::socket&& socket, server_context& ctx);
  /// The connection's slot in the node's connection budget, until a stream session takes the
  /// socket (and the slot with it).
  void hold(std::shared_ptr<const void> slot) { slot_ = std::move(slot); }
  void run();

  /// The gateway's routes, in the order they are tried (http_routes.cpp).
  static std::span<const http_route> routes();

 private:
  void do_read();
  void on_read(beast::error_code ec, std::size_t n);
  /// Reads who asks and checks the target, then dispatch().
  void handle(http::request<http::string_body>&& req, bool body_too_large = false);
  /// Finds the request's route in routes(), applies its checks in order and runs its handler.
  void dispatch(http::request<http::string_body>& req, route_match& m);
  /// The route that takes `req` (nullptr: none), `m` filled by its matcher. Routes whose
  /// methods do not include the request's and that send other methods on are skipped.
  const http_route* find_route(const http::request<http::string_body>& req, route_match& m) const;
  /// The route's checks before its handler (method, Origin, credentials, space, draining):
  /// true when one answered.
  /// A GET (not HEAD) asking for an event stream: a direct SSE query or health feed (arc-hub §10).
  bool wants_direct_stream(const http::request<http::string_body>& req) const;
  bool refuse_by_route(const http::request<http::string_body>& req, const http_route& r,
                       route_match& m);
  /// A refusal in the route's form: the envelope with `e`, or an empty answer.
  void refuse(const http_route& r, unsigned status, const core::error& e,
              std::string_view allow = {});

  void respond(unsigned status, std::string body, bool close = false, std::string_view allow = {},
               std::string_view upgrade = {});
  /// The next respond()'s Content-Type (then JSON again).
  std::string_view content_type_ = "application/json";
  /// The next respond()'s Retry-After, when set (then none again).
  std::string_view retry_after_;
  /// An auth.* refusal in the error envelope, with the Bearer challenge on 401.
  void respond_auth(const core::error& e);
  /// The headers of an event stream, no body: a HEAD probe (arc-hub decision 5).
  void respond_probe();
  void respond_empty(unsigned status, bool close = false, std::string_view allow = {},
                     std::string_view retry_after = {});
  bool origin_ok(const http::request<http::string_body>& req) const;
  /// Answers 503 server.draining and returns true while the node drains.
  bool refuse_if_draining();

  // Node routes (probe_handlers.cpp).
  void serve_livez(http::request<http::string_body>& req, route_match& m);
  void serve_readyz(http::request<http::string_body>& req, route_match& m);
  void serve_metrics(http::request<http::string_body>& req, route_match& m);
  void serve_cluster_health(http::request<http::string_body>& req, route_match& m);
  /// GET /v1/auth for the request's credentials.
  void serve_whoami(http::request<http::string_body>& req, route_match& m);

  // The Arc hubs and the health feed (hub_handlers.cpp).
  void serve_probe(http::request<http::string_body>& req, route_match& m);
  void serve_ws_hub_without_upgrade(http::request<http::string_body>& req, route_match& m);
  void serve_ws_hub(http::request<http::string_body>& req, route_match& m);
  void serve_ws_health(http::request<http::string_body>& req, route_match& m);
  void serve_ws_query(http::request<http::string_body>& req, route_match& m);
  void serve_ws_not_found(http::request<http::string_body>& req, route_match& m);
  void serve_sse_hub(http::request<http::string_body>& req, route_match& m);
  void serve_sse_control(http::request<http::string_body>& req, route_match& m);
  void serve_health(http::request<http::string_body>& req, route_match& m);

  // Named queries (query_handlers.cpp).
  void serve_introspection(http::request<http::string_body>& req, route_match& m);
  void serve_query(http::request<http::string_body>& req, route_match& m);
  void handle_snapshot(const core::query_definition& def, std::string_view query);
  void on_snapshot(const actors::outbound_frame& f);
  void on_snapshot_failed(const std::string& reason);
  class snapshot_sink;

  // The admin page (admin_ui_routes.cpp).
  void serve_admin_events(http::request<http::string_body>& req, route_match& m);
  void serve_admin_file(http::request<http::string_body>& req, route_match& m);
  void respond_asset(const ui_asset& asset, bool not_modified);

  // The windowed API (windowed_handlers.cpp).
  void serve_windowed(http::request<http::string_body>& req, route_match& m);
  void windowed_in_space(std::string body, windowed_route route);
  void on_windowed_snapshot(std::shared_ptr<const std::string> body,
                            std::optional<core::error> error);
  class windowed_snapshot_sink;

  // AG-UI state streams and agent runs (state_handlers.cpp).
  void serve_state(http::request<http::string_body>& req, route_match& m);

  // The write API (write_handlers.cpp).
  void serve_write(http::request<http::string_body>& req, route_match& m);
  /// `POST /v1/spaces/{space}/batch` (gateway/cross_unit_batch.hpp).
  void serve_cross_unit_batch(http::request<http::string_body>& req, route_match& m);
  /// Applies the write `cmd` (routed and checked), its answer queued in request order.
  void dispatch_write(actors::write_command cmd);
  /// Applies a cross-unit batch's writes (each checked) side by side; one answer when the last
  /// is answered, queued in request order.
  void dispatch_batch(std::vector<actors::write_command> writes);
  /// Reads the request's Idempotency-Key into `key` (left as is without one); false after
  /// answering 400 request.invalid_idempotency_key.
  bool read_idempotency_key(const http::request<http::string_body>& req, std::string& key);
  /// Fills a dispatched write's answer slot with its outcome.
  void answer_write(std::optional<http::response<http::string_body>>& slot, unsigned version,
                    bool keep_alive, const std::string& correlation,
                    core::result<actors::write_outcome> r);
  /// Fills an answer slot with a JSON answer of the write API.
  void fill_answer(std::optional<http::response<http::string_body>>& slot, unsigned version,
                   bool keep_alive, const std::string& correlation, unsigned status,
                   std::string body, bool replayed);

  // Reading and answering in order (http_session.cpp).
  void on_write(bool close, beast::error_code ec, std::size_t n);
  /// Queues `res` as the next answer, behind any not yet written. Answers are built apart from
  /// `res_`, which is the one being written (a refusal can be built during another's write).
  void send_res(http::response<http::string_body>&& res);
  /// Writes the front answer when it is ready and no write is under way.
  void pump();
  /// Whether the answer queue is empty and nothing is being written.
  bool answered_all() const { return answers_.empty() && !writing_; }
  /// Whether `req`, read while writes are still unanswered, may be handled now: a write to the
  /// unit those writes go to (the shard applies them in order). Anything else waits.
  bool may_follow(const http::request<http::string_body>& req) const;
  /// Reads on after a write was dispatched, if more may follow it.
  void read_ahead();
  /// Reads on if reading paused at the bound and an answer written has made room.
  void resume_reading();
  /// After the last answer of a closing connection: reads and drops what the client still
  /// sends (the rest of an oversized head or body), for at most 2 s and 1 MiB. Closing with
  /// unread bytes would make the kernel send a reset, which can destroy the answer in flight.
  void drain_before_close();

  beast::tcp_stream stream_;
  server_context& ctx_;
  beast::flat_buffer buffer_;
  std::size_t drained_ = 0;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;  // the answer being written (or being built)
  // Answers not yet written, in request order; an unset one is a write still being applied.
  // A deque: an element's address stays valid while others are added and removed.
  std::deque<std::optional<http::response<http::string_body>>> answers_;
  bool writing_ = false;  // an answer is being written (res_)
  bool reading_ = false;  // a read of the next request is under way
  bool eof_ = false;      // the client finished sending while answers were still owed
  // A request read behind unanswered writes that may not go before their answers.
  std::optional<http::request<http::string_body>> held_;
  // The unit the unanswered writes go to, while more may follow them (runtime::ordered_unit).
  std::optional<std::string> follow_unit_;
  bool paused_ = false;  // reading stopped at max_pipelined_writes answers owed
  // The answer slot the next send_res() fills, instead of queuing at the end: an answer built
  // later for a request read behind others (its place was taken when it was read).
  std::optional<http::response<http::string_body>>* fill_next_ = nullptr;
  bool keep_alive_ = true;
  bool head_ = false;
  std::string remote_;       // peer address
  request_identity id_;      // who the request being handled comes from
  std::string challenge_;    // WWW-Authenticate of the answer being built ("" none)
  std::string correlation_;  // X-Correlation-ID of the answer being built
  // An HTTP snapshot in progress: its direct query, the sink that receives the first emission,
  // and the deadline after which it answers 202 (or 408 with waitForFirstResult).
  std::unique_ptr<actors::direct_query> direct_;
  std::shared_ptr<actors::frame_sink> snapshot_sink_;
  asio::steady_timer snapshot_timer_;
  bool snapshot_waiting_ = false;
  bool snapshot_wait_for_first_ = false;
  unsigned version_ = 11;
  // A windowed `…/query` snapshot in progress: its subscription and the sink of its answer.
  std::unique_ptr<actors::windowed_query> windowed_;
  std::shared_ptr<actors::windowed_sink> windowed_sink_;
  std::shared_ptr<const void> slot_;

  /// A session that takes this connection over: it gets the connection's budget slot.
  template <class S, class... Args>
  std::shared_ptr<S> handed_over(Args&&... args) {
    auto s = std::make_shared<S>(std::forward<Args>(args)...);
    s->connection_slot = std::move(slot_);
    return s;
  }
};

}  // namespace weir::gateway
