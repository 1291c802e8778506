// The harness's writers and their model (see chaos_workload.hpp).
#include "chaos_workload.hpp"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <sstream>

#include <libpq-fe.h>
#include <boost/asio/error.hpp>
#include <boost/json.hpp>

#include "weir/v1/data.grpc.pb.h"

namespace weir::chaos {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr int records_per_writer = 10;
constexpr int sql_records = 10;
constexpr int grpc_records = 8;

std::string code_of(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object()) {
    return {};
  }
  const auto* e = v.as_object().if_contains("error");
  const auto* o = e && e->is_object() ? e : &v;
  const auto* c = o->as_object().if_contains("code");
  return c && c->is_string() ? std::string{c->as_string()} : std::string{};
}

/// Codes whose documentation says nothing was applied.
bool refusal_code(const std::string& code) {
  return code == "server.overloaded" || code == "server.draining" || code == "cluster.not_owner" ||
         code == "store.write_failed" || code == "store.conflict" || code == "record.not_found" ||
         code == "object.not_found";
}

}  // namespace

outcome classify(unsigned status, const std::string& body) {
  if (status == 200) {
    return outcome::acked;
  }
  auto code = code_of(body);
  if (status >= 400 && status < 500) {
    return outcome::refused;
  }
  return refusal_code(code) ? outcome::refused : outcome::unknown;
}

std::vector<std::string> workload_objects() {
  return {"o0", "o1", "o2", "o3", "o4", "g0"};
}

chaos_workload::chaos_workload(chaos_cluster& cluster, std::uint64_t seed, int http_writers)
    : cluster_(cluster), seed_(seed), http_writers_(http_writers) {}

chaos_workload::~chaos_workload() {
  stop();
}

void chaos_workload::start() {
  // The counter starts at 0 (retried until it is acknowledged: the cluster just started).
  for (int attempt = 0; attempt < 100; ++attempt) {
    try {
      auto r = test::http(
          cluster_.http_port(attempt % cluster_.size()), "PUT",
          std::string{"/v1/spaces/t/objects/"} + counter_object + "/datasets/items/records/ctr",
          R"({"n":0})");
      if (r.status == 200) {
        break;
      }
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(100ms);
  }
  for (int w = 0; w < http_writers_; ++w) {
    threads_.emplace_back([this, w] { http_writer(w); });
  }
  threads_.emplace_back([this] { sql_writer(); });
  threads_.emplace_back([this] { counter_writer(); });
  threads_.emplace_back([this] { grpc_writer(); });
  threads_.emplace_back([this] { doc_writer(); });
}

void chaos_workload::pause() {
  paused_ = true;
  while (in_flight_.load() > 0) {
    std::this_thread::sleep_for(10ms);
  }
}

void chaos_workload::resume() {
  paused_ = false;
}

void chaos_workload::stop() {
  stopping_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) {
      t.join();
    }
  }
  threads_.clear();
}

bool chaos_workload::wait_turn() {
  while (paused_ && !stopping_) {
    std::this_thread::sleep_for(10ms);
  }
  if (stopping_) {
    return false;
  }
  ++in_flight_;
  if (paused_) {  // paused between the check and the count: step back
    --in_flight_;
    return wait_turn();
  }
  return true;
}

int chaos_workload::pick_member(std::mt19937_64& rng) {
  int n = cluster_.size();
  int start = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
  for (int k = 0; k < n; ++k) {
    if (cluster_.serving((start + k) % n)) {
      return (start + k) % n;
    }
  }
  return start;  // none serves: the write is refused at connect, or waits
}

void chaos_workload::record(const std::string& key, op o) {
  std::lock_guard lock{mu_};
  if (o.result == outcome::acked) {
    acks_.push_back(std::chrono::steady_clock::now());
    ++totals_.acked;
  } else if (o.result == outcome::refused) {
    ++totals_.refused;
  } else {
    ++totals_.unknown;
  }
  model_[key].ops.push_back(std::move(o));
}

void chaos_workload::http_writer(int w) {
  std::mt19937_64 rng{seed_ * 1000003 + static_cast<std::uint64_t>(w)};
  std::uint64_t n = 0;
  while (wait_turn()) {
    int j = static_cast<int>(rng() % records_per_writer);
    auto objects = workload_objects();
    auto object = objects[static_cast<std::size_t>(w * records_per_writer + j) % 5];
    auto id = "w" + std::to_string(w) + "r" + std::to_string(j);
    auto tok = "w" + std::to_string(w) + "-" + std::to_string(++n);
    auto base = "/v1/spaces/t/objects/" + object + "/datasets/items/records";
    auto kind = rng() % 100;
    std::string method = "PUT", target = base + "/" + id, body, what;
    std::map<std::string, std::string> headers;
    std::vector<std::string> ids{id};
    std::string value = tok;
    if (kind < 40) {
      body = R"({"tok":")" + tok + R"(","n":)" + std::to_string(n) + "}";
      what = "PUT";
    } else if (kind < 55) {
      method = "PATCH";
      body = R"({"$set":{"tok":")" + tok + R"("}})";
      what = "PATCH $set";
    } else if (kind < 70) {
      method = "PATCH";
      body = R"([{"op":"add","path":"/tok","value":")" + tok + R"("}])";
      headers["Content-Type"] = "application/json-patch+json";
      what = "JSON Patch";
    } else if (kind < 85) {
      // A batch: this record and its neighbour (also this writer's, in the same object).
      int k = (j + 5) % records_per_writer;
      auto other = "w" + std::to_string(w) + "r" + std::to_string(k);
      method = "POST";
      target = base;
      body = R"({"upsert":[{"id":")" + id + R"(","tok":")" + tok + R"("},{"id":")" + other +
             R"(","tok":")" + tok + R"("}]})";
      ids.push_back(other);
      what = "batch";
    } else {
      method = "DELETE";
      value.clear();
      what = "DELETE";
    }
    std::string via;
    auto result = keyed_http(rng, method, target, body, headers, tok, via);
    for (const auto& rid : ids) {
      record(object + "/" + rid, op{value, result, what + via});
    }
    --in_flight_;
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 20));
  }
}

outcome chaos_workload::keyed_http(std::mt19937_64& rng, const std::string& method,
                                   const std::string& target, const std::string& body,
                                   std::map<std::string, std::string> headers,
                                   const std::string& key, std::string& via) {
  // Every write carries its own Idempotency-Key; one whose outcome is unknown is retried under
  // it (on any member) up to twice: applied once, or answered with what was.
  headers["Idempotency-Key"] = key;
  outcome result = outcome::unknown;
  for (int attempt = 0; attempt < 3 && result == outcome::unknown; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(300ms);
    }
    int member = pick_member(rng);
    via += (via.empty() ? " via " : ",") + cluster_.id(member);
    try {
      auto r = test::http(cluster_.http_port(member), method, target, body, headers);
      result = classify(r.status, r.body);
    } catch (const boost::system::system_error& e) {
      // Refused at connect: nothing was sent (though an earlier attempt may have been).
      result = e.code() == boost::asio::error::connection_refused && attempt == 0
                   ? outcome::refused
                   : outcome::unknown;
    } catch (const std::exception&) {
      result = outcome::unknown;
    }
  }
  return result;
}

void chaos_workload::doc_writer() {
  std::mt19937_64 rng{seed_ * 613 + 11};
  std::uint64_t n = 0;
  while (wait_turn()) {
    auto object = "d" + std::to_string(rng() % doc_objects);
    auto tok = "d-" + std::to_string(++n);
    auto target = "/v1/spaces/t/objects/" + object;
    auto kind = rng() % 10;
    std::string method = "PUT", body = R"({"tok":")" + tok + R"("})", what = "PUT object";
    std::map<std::string, std::string> headers;
    std::string value = tok;
    if (kind >= 5 && kind < 8) {
      method = "PATCH";
      body = R"([{"op":"add","path":"/tok","value":")" + tok + R"("}])";
      headers["Content-Type"] = "application/json-patch+json";
      what = "JSON Patch object";
    } else if (kind >= 8) {
      method = "DELETE";
      body.clear();
      value.clear();
      what = "DELETE object";
    }
    std::string via;
    auto result = keyed_http(rng, method, target, body, headers, tok, via);
    record(std::string{docs_object} + "/" + object, op{value, result, what + via});
    --in_flight_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 40));
  }
}

void chaos_workload::grpc_writer() {
  std::mt19937_64 rng{seed_ * 7919 + 17};
  std::uint64_t n = 0;
  while (wait_turn()) {
    int member = pick_member(rng);
    auto id = "g" + std::to_string(rng() % grpc_records);
    auto tok = "g-" + std::to_string(++n);
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(cluster_.grpc_port(member)),
                                       grpc::InsecureChannelCredentials());
    auto stub = weir::v1::Data::NewStub(channel);
    weir::v1::PutRecordRequest req;
    req.set_space("t");
    req.set_object_id("g0");
    req.set_dataset("items");
    req.set_id(id);
    req.set_record_json(R"({"tok":")" + tok + "\"}");
    weir::v1::WriteReply reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    auto s = stub->PutRecord(&ctx, req, &reply);
    outcome result = outcome::unknown;
    if (s.ok()) {
      result = outcome::acked;
    } else if (!s.error_details().empty()) {
      auto code = code_of(s.error_details());
      result = refusal_code(code) || s.error_code() == grpc::StatusCode::INVALID_ARGUMENT
                   ? outcome::refused
                   : outcome::unknown;
    }
    if (result == outcome::acked) {
      std::lock_guard lock{mu_};
      ++totals_.grpc_acked;
    }
    record("g0/" + id, op{tok, result, "gRPC PutRecord via " + cluster_.id(member)});
    --in_flight_;
    std::this_thread::sleep_for(std::chrono::milliseconds(10 + rng() % 30));
  }
}

void chaos_workload::sql_writer() {
  std::mt19937_64 rng{seed_ * 31 + 7};
  std::uint64_t n = 0;
  PGconn* c = nullptr;
  while (wait_turn()) {
    if (!c || PQstatus(c) != CONNECTION_OK) {
      if (c) {
        PQfinish(c);
      }
      c = PQconnectdb((cluster_.pg_url() + " connect_timeout=3").c_str());
    }
    auto id = "s" + std::to_string(rng() % sql_records);
    auto tok = "s-" + std::to_string(++n);
    bool del = rng() % 10 == 0;
    std::string sql =
        del ? "DELETE FROM weir_records WHERE space = 't' AND object = '" +
                  std::string{sql_object} + "' AND dataset = 'items' AND id = '" + id + "'"
            : "INSERT INTO weir_records (space, object, dataset, id, doc, version) VALUES ('t', '" +
                  std::string{sql_object} + "', 'items', '" + id + "', '{\"tok\": \"" + tok +
                  "\"}', 0) ON CONFLICT (space, object, dataset, id) DO UPDATE SET doc = "
                  "excluded.doc";
    outcome result = outcome::refused;
    if (PQstatus(c) == CONNECTION_OK) {
      PGresult* r = PQexec(c, sql.c_str());
      if (PQresultStatus(r) == PGRES_COMMAND_OK) {
        result = outcome::acked;
      } else if (PQstatus(c) != CONNECTION_OK) {
        result = outcome::unknown;  // the session broke: the commit may have happened
      }
      PQclear(r);
    }
    if (result == outcome::acked) {
      std::lock_guard lock{mu_};
      ++totals_.sql_acked;
    }
    record(std::string{sql_object} + "/" + id, op{del ? "" : tok, result, "SQL"});
    --in_flight_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 60));
  }
  if (c) {
    PQfinish(c);
  }
}

void chaos_workload::counter_writer() {
  std::mt19937_64 rng{seed_ * 131 + 3};
  std::uint64_t n = 0;
  while (wait_turn()) {
    // Retried under its Idempotency-Key while its outcome is unknown: counted once at most.
    std::string via;
    auto result = keyed_http(
        rng, "PATCH",
        std::string{"/v1/spaces/t/objects/"} + counter_object + "/datasets/items/records/ctr",
        R"({"$inc":{"n":1}})", {}, "inc-" + std::to_string(++n), via);
    {
      std::lock_guard lock{mu_};
      if (result == outcome::acked) {
        ++incs_acked_;
        ++totals_.incs_acked;
        acks_.push_back(std::chrono::steady_clock::now());
      } else if (result == outcome::unknown) {
        ++incs_unknown_;
      }
    }
    --in_flight_;
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 15));
  }
}

std::map<std::string, std::string> chaos_workload::stored(const std::string& object, bool* ok) {
  std::map<std::string, std::string> out;
  PGconn* c = PQconnectdb((cluster_.pg_url() + " connect_timeout=5").c_str());
  PGresult* r = nullptr;
  if (PQstatus(c) == CONNECTION_OK) {
    auto sql = object == docs_object
                   ? std::string{"SELECT id, coalesce(doc->>'tok', '') FROM weir_records WHERE "
                                 "space = 't' AND object = '' AND dataset = 'objects'"}
                   : "SELECT id, coalesce(doc->>'tok', '') FROM weir_records WHERE space = 't' "
                     "AND object = '" + object + "' AND dataset = 'items'";
    r = PQexec(c, sql.c_str());
  }
  bool good = r && PQresultStatus(r) == PGRES_TUPLES_OK;
  if (good) {
    for (int i = 0; i < PQntuples(r); ++i) {
      out[PQgetvalue(r, i, 0)] = PQgetvalue(r, i, 1);
    }
  }
  if (ok) {
    *ok = good;
  }
  PQclear(r);
  PQfinish(c);
  return out;
}

void chaos_workload::check(std::vector<std::string>& divergences) {
  std::lock_guard lock{mu_};
  std::map<std::string, std::map<std::string, std::string>> by_object;
  auto objects = workload_objects();
  objects.push_back(sql_object);
  objects.push_back(docs_object);
  for (const auto& o : objects) {
    bool ok = false;
    by_object[o] = stored(o, &ok);
    if (!ok) {
      divergences.push_back("cannot read object " + o + " from PostgreSQL at a quiet point");
      return;
    }
  }
  for (auto& [key, m] : model_) {
    auto slash = key.find('/');
    auto object = key.substr(0, slash), id = key.substr(slash + 1);
    const auto& held = by_object[object];
    auto it = held.find(id);
    std::string actual = it == held.end() ? std::string{} : it->second;
    // The last acknowledged write, or an unknown one after it; with none acknowledged, what
    // the record held before (the first op's baseline is an acknowledged entry, see below).
    std::vector<std::string> allowed;
    std::size_t last = m.ops.size();
    for (std::size_t i = m.ops.size(); i-- > 0;) {
      if (m.ops[i].result == outcome::acked) {
        last = i;
        break;
      }
    }
    allowed.push_back(last < m.ops.size() ? m.ops[last].tok : std::string{});
    for (std::size_t i = last < m.ops.size() ? last + 1 : 0; i < m.ops.size(); ++i) {
      if (m.ops[i].result == outcome::unknown) {
        allowed.push_back(m.ops[i].tok);
      }
    }
    if (std::find(allowed.begin(), allowed.end(), actual) == allowed.end()) {
      std::ostringstream d;
      d << "record " << key << " holds '" << actual << "'; allowed:";
      for (auto& a : allowed) {
        d << " '" << a << "'";
      }
      d << "; its last writes:";
      for (std::size_t i = m.ops.size() > 8 ? m.ops.size() - 8 : 0; i < m.ops.size(); ++i) {
        const auto& o = m.ops[i];
        d << " [" << o.what << " '" << o.tok << "' "
          << (o.result == outcome::acked     ? "acked"
              : o.result == outcome::refused ? "refused"
                                             : "unknown")
          << "]";
      }
      divergences.push_back(d.str());
    }
    // What is stored is where the next phase starts.
    m.ops.assign(1, op{actual, outcome::acked, "stored at a quiet point"});
  }
  // The counter: every acknowledged increment, and no more than the unknown ones besides.
  bool ok = false;
  auto ctr = stored(counter_object, &ok);
  PGconn* c = PQconnectdb((cluster_.pg_url() + " connect_timeout=5").c_str());
  PGresult* r = PQexec(c,
                       "SELECT (doc->>'n')::bigint FROM weir_records WHERE space = 't' AND "
                       "object = 'counters' AND id = 'ctr'");
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
    auto n = std::stoll(PQgetvalue(r, 0, 0));
    auto low = counter_base_ + static_cast<std::int64_t>(incs_acked_);
    auto high = low + static_cast<std::int64_t>(incs_unknown_);
    if (n < low || n > high) {
      divergences.push_back("the counter is " + std::to_string(n) + ", outside [" +
                            std::to_string(low) + ", " + std::to_string(high) + "]");
    }
    counter_base_ = n;
    incs_acked_ = incs_unknown_ = 0;
  } else {
    divergences.push_back("cannot read the counter from PostgreSQL");
  }
  PQclear(r);
  PQfinish(c);
}

chaos_workload::totals chaos_workload::counts() const {
  std::lock_guard lock{mu_};
  return totals_;
}

std::vector<std::chrono::steady_clock::time_point> chaos_workload::ack_times() const {
  std::lock_guard lock{mu_};
  return acks_;
}

}  // namespace weir::chaos
