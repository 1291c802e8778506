// weir::gateway admin page routes — GET /ui (and /ui/): the page and its files, compiled into
// the binary (ui_assets); GET /ui/events: its live data (admin_events_session), which needs the
// role auth.adminRole when authentication is on (docs/operations.md#admin-page). The routes
// themselves are http_session members, defined in admin_ui_routes.cpp. Internal to gateway/.
#pragma once

#include <optional>
#include <string_view>

#include "core/result.hpp"

namespace weir::gateway {

struct server_context;
struct request_identity;

/// True for /ui and everything under /ui/.
bool is_admin_ui_path(std::string_view path);

/// Why `id` may not read the admin page's data, if it may not: nothing without authentication
/// (the data is then as open as /cluster/health); else the refused credential, auth.required
/// (401) for an anonymous caller, auth.forbidden (403) without the role.
std::optional<core::error> admin_refusal(const server_context& ctx, const request_identity& id);

}  // namespace weir::gateway
