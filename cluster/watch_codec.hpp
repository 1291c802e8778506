// weir::cluster watch codec — a query and its rows and updates as the Watch stream carries them
// (proto/weir/v1/query_owner.proto): the gateway writes its bound query, the owner binds it
// again from its own configuration; the owner writes snapshots and updates, the gateway reads
// them back into records. Internal to cluster/ (includes the generated protobuf headers).
#pragma once

#include "actors/query_catalog.hpp"
#include "actors/view_update.hpp"
#include "core/query_definition.hpp"
#include "weir/v1/query_owner.pb.h"

namespace weir::cluster {

/// What a gateway sends to open a watch of `q`.
v1::BoundQuery to_proto(const core::bound_query& q);

/// The owner's binding of a watched query: a named query bound from its own catalog, or a
/// windowed request parsed again. Errors name why the members disagree (unknown query,
/// different key or definition).
core::result<core::bound_query> bind_watched(const v1::BoundQuery& q,
                                             const actors::query_catalog& catalog);

void to_proto(const actors::view_snapshot& s, v1::Snapshot* out);
void to_proto(const actors::view_update& u, v1::Update* out);

actors::view_snapshot from_proto(std::uint64_t seq, const v1::Snapshot& s);
actors::view_update from_proto(std::uint64_t seq, const std::string& version_id,
                               const v1::Update& u);

}  // namespace weir::cluster
