// AG-UI state events from pre-encoded JSON (see ag_ui_state.hpp).
#include "core/ag_ui_state.hpp"

namespace weir::core {

std::string encode_state_snapshot(std::optional<std::string_view> document_json) {
  constexpr std::string_view head = R"({"type":"STATE_SNAPSHOT","snapshot":)";
  std::string out;
  out.reserve(head.size() + (document_json ? document_json->size() : 2) + 1);
  out.append(head);
  out.append(document_json ? *document_json : std::string_view{"{}"});
  out.push_back('}');
  return out;
}

std::string encode_state_delta(std::string_view patch_json) {
  constexpr std::string_view head = R"({"type":"STATE_DELTA","delta":)";
  std::string out;
  out.reserve(head.size() + patch_json.size() + 1);
  out.append(head);
  out.append(patch_json);
  out.push_back('}');
  return out;
}

}  // namespace weir::core
