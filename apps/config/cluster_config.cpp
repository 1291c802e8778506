// The `cluster` section of weir.yaml (members or elastic membership, peer authentication,
// timings), its checks, and the `--member` flag.
#include "apps/config/config_reader.hpp"

namespace weir::config::reader {

bool endpoint_ok(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return false;
  }
  auto p = text.substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  return ec == std::errc{} && ptr == p.data() + p.size() && value > 0 && value <= 65535;
}

result<void> read_cluster(std::string_view file, const json::object& root, node_config& cfg) {
  auto& c = cfg.cluster;
  auto s = open_section(file, root, "cluster", keys_of("cluster"));
  if (!s) {
    return std::move(s).error();
  }
  // Peer authentication: a shared token, mutual TLS, or both.
  {
    auto token = s->text("token");
    auto token_file = s->text("tokenFile");
    if (!token) {
      return std::move(token).error();
    }
    if (!token_file) {
      return std::move(token_file).error();
    }
    if (*token && *token_file) {
      return config_error(file, "cluster.tokenFile", "give token or tokenFile, not both");
    }
    if (*token) {
      c.token = **token;
    } else if (*token_file) {
      auto t = read_named_file(file, "cluster.tokenFile", **token_file);
      if (!t) {
        return std::move(t).error();
      }
      c.token = std::move(*t);
      while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) {
        c.token.pop_back();
      }
    }
    if (!c.token.empty() && c.token.size() < 32) {
      return config_error(file, *token ? "cluster.token" : "cluster.tokenFile",
                          "the peer token must be at least 32 bytes (use a random one)");
    }
    if (s->obj != nullptr && s->get("tls") != nullptr) {
      auto t = open_section(file, *s->obj, "tls", keys_of("cluster.tls"), "cluster.tls");
      if (!t) {
        return std::move(t).error();
      }
      for (auto [key, out] :
           {std::pair{"certFile", &c.tls.cert_pem}, std::pair{"keyFile", &c.tls.key_pem},
            std::pair{"caFile", &c.tls.ca_pem}}) {
        auto name = t->text(key);
        if (!name) {
          return std::move(name).error();
        }
        if (!*name) {
          return config_error(file, t->path(key), "is required");
        }
        auto pem = read_named_file(file, t->path(key), **name);
        if (!pem) {
          return std::move(pem).error();
        }
        *out = std::move(*pem);
      }
    }
  }
  WEIR_TRY(read_declared(*s, "cluster", cfg));
  if (c.down_after_ms <= c.suspect_after_ms) {
    return config_error(file, "cluster.downAfterMs", "must be greater than cluster.suspectAfterMs");
  }
  if (c.lease_renew_ms * 2 > c.lease_ms) {
    return config_error(file, "cluster.leaseRenewMs", "must be at most half of cluster.leaseMs");
  }
  if (s->obj != nullptr && s->get("advertise") != nullptr) {
    auto a =
        open_section(file, *s->obj, "advertise", keys_of("cluster.advertise"), "cluster.advertise");
    if (!a) {
      return std::move(a).error();
    }
    for (auto [key, out] :
         {std::pair{"peer", &c.advertise_peer}, std::pair{"http", &c.advertise_http}}) {
      auto t = a->text(key);
      if (!t) {
        return std::move(t).error();
      }
      if (!*t) {
        return config_error(file, a->path(key), "is required (\"host:port\")");
      }
      *out = **t;
    }
  }
  if (const json::value* m = s->get("members")) {
    if (!m->is_array()) {
      return config_error(file, "cluster.members",
                          "must be a list of {id, peer: \"host:port\", http: \"host:port\"}");
    }
    std::size_t i = 0;
    for (const auto& v : m->get_array()) {
      auto where = "cluster.members[" + std::to_string(i++) + "]";
      json::object holder;
      holder[where] = v;
      auto ms = open_section(file, holder, where, keys_of("cluster.members[]"));
      if (!ms) {
        return std::move(ms).error();
      }
      cluster_member member;
      for (auto [key, out] : {std::pair{"id", &member.id}, std::pair{"peer", &member.peer},
                              std::pair{"http", &member.http}}) {
        auto t = ms->text(key);
        if (!t) {
          return std::move(t).error();
        }
        if (!*t) {
          return config_error(file, ms->path(key), "is required");
        }
        *out = **t;
      }
      c.members.push_back(std::move(member));
    }
  }
  if (auto r = validate_cluster(c, false); !r) {
    return config_error(file, "cluster", r.error().message);
  }
  return {};
}

}  // namespace weir::config::reader

namespace weir::config {

using namespace reader;

core::result<void> validate_cluster(const cluster_settings& c, bool require_node_id) {
  auto bad = [](std::string msg) {
    return make_error(std::string(config_invalid), std::move(msg));
  };
  auto id_ok = [](const std::string& id) {
    return !id.empty() && id.size() <= 128 && id.find_first_of(" \t\r\n/@") == std::string::npos;
  };
  if (!c.members.empty() && !c.advertise_peer.empty()) {
    return bad(
        "give members (a static list) or advertise (elastic membership on the postgres "
        "backend), not both");
  }
  if (c.members.empty()) {
    if (c.advertise_peer.empty()) {
      if (!c.node_id.empty()) {
        return bad(
            "nodeId is set but neither members are listed nor this member's advertise "
            "addresses (elastic membership) given");
      }
      return {};
    }
    if (!endpoint_ok(c.advertise_peer) || !endpoint_ok(c.advertise_http)) {
      return bad("advertise needs peer and http as \"host:port\" with a port 1..65535");
    }
    if (require_node_id && c.token.empty() && !c.tls.enabled()) {
      return bad(
          "members must authenticate each other: set cluster.token (or tokenFile) to a "
          "shared secret of at least 32 bytes, or cluster.tls for mutual TLS");
    }
    if (require_node_id && c.node_id.empty()) {
      return bad("advertise is set but this node's nodeId (--node-id) is not");
    }
    if (!c.node_id.empty() && !id_ok(c.node_id)) {
      return bad("nodeId '" + c.node_id + "' must be 1..128 characters without spaces, '/' or '@'");
    }
    return {};
  }
  if (c.members.size() > 64) {
    return bad("at most 64 members are supported");
  }
  if (require_node_id && c.token.empty() && !c.tls.enabled()) {
    // The peer services apply writes and drive connections: nobody else may call them.
    return bad(
        "members must authenticate each other: set cluster.token (or tokenFile) to a "
        "shared secret of at least 32 bytes, or cluster.tls for mutual TLS");
  }
  if (c.node_id.empty() && require_node_id) {
    return bad("members are listed but this node's nodeId (--node-id) is not set");
  }
  bool self = false;
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    const auto& m = c.members[i];
    if (!id_ok(m.id)) {
      return bad("member id '" + m.id + "' must be 1..128 characters without spaces, '/' or '@'");
    }
    if (!endpoint_ok(m.peer) || !endpoint_ok(m.http)) {
      return bad("member '" + m.id + "' needs peer and http as \"host:port\" with a port 1..65535");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (c.members[j].id == m.id) {
        return bad("member id '" + m.id + "' is listed twice");
      }
    }
    self = self || m.id == c.node_id;
  }
  if (!self && !c.node_id.empty()) {
    return bad("nodeId '" + c.node_id + "' is not one of the members");
  }
  return {};
}

core::result<cluster_member> parse_member_flag(std::string_view text) {
  auto bad = [&] {
    return make_error(
        std::string(config_invalid),
        "--member wants ID=PEER_HOST:PORT,HTTP_HOST:PORT, got '" + std::string(text) + "'");
  };
  auto eq = text.find('=');
  auto comma = text.find(',', eq == std::string_view::npos ? 0 : eq);
  if (eq == std::string_view::npos || eq == 0 || comma == std::string_view::npos) {
    return bad();
  }
  cluster_member m{std::string(text.substr(0, eq)),
                   std::string(text.substr(eq + 1, comma - eq - 1)),
                   std::string(text.substr(comma + 1))};
  if (!endpoint_ok(m.peer) || !endpoint_ok(m.http)) {
    return bad();
  }
  return m;
}

}  // namespace weir::config
