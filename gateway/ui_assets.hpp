// weir::gateway::ui_assets — the admin page's static files (gateway/ui/), compiled into the
// binary at build time by cmake/embed_assets.cmake: a node serves /ui with no files to deploy
// and nothing fetched from elsewhere. Internal to gateway/; only admin_ui_routes includes it.
#pragma once

#include <string_view>

namespace weir::gateway {

struct ui_asset {
  std::string_view name;          ///< its file name under gateway/ui/ ("index.html")
  std::string_view content_type;  ///< with charset for text
  std::string_view etag;          ///< quoted, from the bytes' SHA-256: changes with the file
  std::string_view body;
};

/// The asset named `name`, or null.
const ui_asset* find_ui_asset(std::string_view name);

}  // namespace weir::gateway
