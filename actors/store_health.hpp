// weir::actors::add_store_health — the store's members of /cluster/health (single node or
// cluster alike): `changeCapture` (whether this member's store captures what other programs
// commit, which member reads the stream, and on that member the position it confirmed and how
// far behind the server's WAL it is, or why it is not running), `storeConnections` (reconnects,
// the last failure to reach the database) and `skippedRecords` (rows read and not served: how
// many, and the latest with their unit, id and reason).
#pragma once

#include <boost/json/object.hpp>

#include <boost/json/array.hpp>

#include "actors/runtime.hpp"
#include "store/durable_store.hpp"

namespace weir::actors {

inline boost::json::object capture_health(const store::capture_status& s) {
  boost::json::object o;
  o["enabled"] = s.enabled;
  o["reader"] = s.reader.empty() ? boost::json::value(nullptr) : boost::json::value(s.reader);
  o["reading"] = s.reading;
  if (s.reading) {
    o["appliedLsn"] = s.applied_lsn;
    o["lagBytes"] = s.lag_bytes;
  }
  o["transactions"] = s.transactions;
  if (!s.error.empty()) {
    o["error"] = s.error;
  }
  return o;
}

inline void add_store_health(boost::json::object& doc, const runtime& rt) {
  namespace json = boost::json;
  doc["changeCapture"] = capture_health(rt.store_capture());
  auto c = rt.store_connections();
  doc["storeConnections"] = {
      {"reconnects", c.reconnects},
      {"error", c.error.empty() ? json::value(nullptr) : json::value(c.error)}};
  json::array rows;
  for (auto& e : rt.recent_skipped_rows()) {
    rows.push_back(json::object{{"space", e.space},
                                {"object", e.object},
                                {"dataset", e.dataset},
                                {"id", e.id},
                                {"code", e.code},
                                {"reason", e.reason},
                                {"atMs", e.at_ms}});
  }
  doc["skippedRecords"] = {{"total", rt.stats().skipped_records}, {"recent", std::move(rows)}};
}

}  // namespace weir::actors
