// Windowed-subscribe test support (see the header).
#include "windowed_test_support.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace weir::test {

namespace json = boost::json;

std::string windowed_path(const std::string& space, const std::string& scope, bool subscribe) {
  std::string p = "/v1/spaces/" + space;
  if (scope == "objects" || scope == "datasets") {
    p += "/" + scope;
  }
  p += "/query";
  if (subscribe) {
    p += "/subscribe";
  }
  return p;
}

http_response windowed_query(std::uint16_t port, const std::string& space, const std::string& scope,
                             const std::string& body) {
  return http(port, "POST", windowed_path(space, scope, false), body,
              {{"Content-Type", "application/json"}});
}

windowed_stream::windowed_stream(std::uint16_t port, const std::string& space,
                                 const std::string& scope, const std::string& body,
                                 const header_list& headers) {
  sse_client::options o;
  o.method = "POST";
  o.target = windowed_path(space, scope, true);
  o.headers = {{"Content-Type", "application/json"}};
  o.headers.insert(o.headers.end(), headers.begin(), headers.end());
  o.body = body;
  client_ = std::make_unique<sse_client>(port, o);
}

json::value windowed_stream::error_body() const {
  return json::parse(client_->response().body);
}

std::optional<windowed_frame> windowed_stream::next(std::chrono::milliseconds timeout,
                                                    bool comments) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return std::nullopt;
    }
    auto text = client_->read_event(left);
    if (!text) {
      return std::nullopt;
    }
    windowed_frame f;
    f.raw = *text;
    std::string data;
    std::size_t pos = 0;
    bool comment = false;
    while (pos <= text->size()) {
      auto nl = text->find('\n', pos);
      auto line = text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (line.rfind("event: ", 0) == 0) {
        f.event = line.substr(7);
      } else if (line.rfind("data: ", 0) == 0) {
        data += line.substr(6);
      } else if (!line.empty() && line.front() == ':') {
        comment = true;
      } else if (!line.empty()) {
        ADD_FAILURE() << "unexpected line in a windowed frame: " << line;
      }
      if (nl == std::string::npos) {
        break;
      }
      pos = nl + 1;
    }
    if (comment && f.event.empty() && data.empty()) {
      if (comments) {
        return f;
      }
      continue;
    }
    boost::system::error_code ec;
    f.data = json::parse(data, ec);
    EXPECT_FALSE(ec) << "data is not JSON: " << data;
    return f;
  }
}

void windowed_stream::apply(const windowed_frame& f) {
  if (f.event == "snapshot") {
    window_ = by_record_id(f.data.as_object().at("records"));
  } else if (f.event == "changes") {
    for (const auto& ev : f.data.as_array()) {
      const auto& e = ev.as_object();
      events_.push_back(e);
      for (const char* list : {"added", "updated"}) {
        if (const auto* l = e.if_contains(list)) {
          for (const auto& r : l->as_array()) {
            const auto& o = r.as_object();
            window_[std::string{o.at("id").as_string()}] = o.at("doc");
          }
        }
      }
      if (const auto* l = e.if_contains("removed")) {
        for (const auto& r : l->as_array()) {
          window_.erase(std::string{r.as_object().at("id").as_string()});
        }
      }
    }
  } else if (f.event == "closed") {
    closed_ = std::string{f.data.as_object().at("reason").as_string()};
  }
}

json::object windowed_stream::open(std::chrono::milliseconds timeout) {
  auto ready = next(timeout);
  if (!ready) {
    ADD_FAILURE() << "no ready frame";
    return {};
  }
  EXPECT_EQ(ready->event, "ready") << ready->raw;
  EXPECT_EQ(ready->data, json::object{}) << ready->raw;
  auto snap = next(timeout);
  if (!snap) {
    ADD_FAILURE() << "no snapshot frame";
    return {};
  }
  EXPECT_EQ(snap->event, "snapshot") << snap->raw;
  apply(*snap);
  return snap->data.is_object() ? snap->data.as_object() : json::object{};
}

bool windowed_stream::wait_for(const std::map<std::string, json::value>& expect,
                               std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (window_ != expect) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return false;
    }
    auto f = next(left);
    if (!f) {
      return false;
    }
    apply(*f);
  }
  return true;
}

std::map<std::string, json::value> by_record_id(const json::value& records) {
  std::map<std::string, json::value> out;
  for (const auto& r : records.as_array()) {
    out[std::string{r.as_object().at("id").as_string()}] = r;
  }
  return out;
}

}  // namespace weir::test
