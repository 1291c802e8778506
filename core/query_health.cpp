// Encoding of the health feed value (arc-hub §11).
#include "core/query_health.hpp"

#include <chrono>
#include <cstdio>
#include <map>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {

namespace {

boost::json::value time_or_null(const std::optional<std::int64_t>& ms) {
  if (!ms) {
    return nullptr;
  }
  return boost::json::value(iso8601_utc(*ms));
}

boost::json::value text_or_null(const std::string& s) {
  if (s.empty()) {
    return nullptr;
  }
  return boost::json::value(s);
}

boost::json::object encode_client(const client_info& c) {
  boost::json::object o;
  o["remoteIpAddress"] = text_or_null(c.remote_ip_address);
  o["userAgent"] = text_or_null(c.user_agent);
  o["userId"] = text_or_null(c.user_id);
  o["protocol"] = c.protocol;
  return o;
}

void put_times(boost::json::object& o, const subscription_health& s) {
  o["connectedAt"] = iso8601_utc(s.connected_at_ms);
  o["lastPingSentAt"] = time_or_null(s.last_ping_sent_at_ms);
  o["lastPongReceivedAt"] = time_or_null(s.last_pong_received_at_ms);
  o["lastDataServedAt"] = time_or_null(s.last_data_served_at_ms);
}

}  // namespace

std::string iso8601_utc(std::int64_t unix_ms) {
  using namespace std::chrono;
  auto tp = sys_time<milliseconds>{milliseconds{unix_ms}};
  auto day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss hms{tp - day};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
                static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()),
                static_cast<int>(hms.subseconds().count()));
  return buf;
}

std::string encode_query_health(const std::vector<connection_health>& connections) {
  boost::json::array conns;
  std::size_t total_subscriptions = 0;
  // Grouped by query name, in name order so equal states encode to equal text.
  std::map<std::string_view, boost::json::array> by_query;
  for (const auto& c : connections) {
    boost::json::array subs;
    for (const auto& s : c.subscriptions) {
      ++total_subscriptions;
      boost::json::object o;
      o["subscriptionId"] = s.subscription_id;
      o["queryIdentifier"] = s.query_identifier;
      o["readModelType"] = s.read_model_type;
      put_times(o, s);
      o["clientInfo"] = encode_client(c.client);
      subs.push_back(std::move(o));

      boost::json::object sub;
      sub["connectionId"] = c.connection_id;
      sub["protocol"] = c.protocol;
      sub["subscriptionId"] = s.subscription_id;
      put_times(sub, s);
      sub["clientInfo"] = encode_client(c.client);
      by_query[s.query_identifier].push_back(std::move(sub));
    }
    boost::json::object co;
    co["connectionId"] = c.connection_id;
    co["protocol"] = c.protocol;
    co["establishedAt"] = iso8601_utc(c.established_at_ms);
    co["subscriptions"] = std::move(subs);
    conns.push_back(std::move(co));
  }
  boost::json::array queries;
  for (auto& [name, subscribers] : by_query) {
    boost::json::object q;
    q["queryName"] = name;
    q["totalSubscriptions"] = subscribers.size();
    q["subscribers"] = std::move(subscribers);
    queries.push_back(std::move(q));
  }
  boost::json::object root;
  root["connections"] = std::move(conns);
  root["totalConnections"] = connections.size();
  root["totalSubscriptions"] = total_subscriptions;
  root["querySubscriptions"] = std::move(queries);
  return boost::json::serialize(root);
}

}  // namespace weir::core
