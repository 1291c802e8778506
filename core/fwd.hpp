// Forward declarations for weir::core; include this instead of a full header where it will do.
#pragma once

namespace weir::core {
struct error;
template <class T>
class result;
class filter;
class sort_spec;
class revision_table;
struct change_set;
struct query_definition;
struct subscription_request;
struct client_frame;
}  // namespace weir::core
