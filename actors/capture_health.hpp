// weir::actors::capture_health — the `changeCapture` member of /cluster/health: whether this
// member's store captures what other programs commit, which member reads the stream, and (on
// that member) the position it confirmed and how far behind the server's WAL it is.
#pragma once

#include <boost/json/object.hpp>

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

}  // namespace weir::actors
