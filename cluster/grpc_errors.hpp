// Weir errors across gRPC: a failed call carries a grpc::Status whose message is the human text
// and whose error_details is the JSON error object {"code","message","details"} of the HTTP API,
// so a forwarded write fails on the receiving node exactly as it failed on the owner.
// Internal to cluster/ (includes gRPC).
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/result.hpp"

namespace weir::cluster {

/// The gRPC status for a Weir error.
grpc::Status to_status(const core::error& e);

/// The Weir error a failed call carried; a status without Weir details (the transport failed,
/// the peer is gone, the deadline passed) becomes cluster.owner_unavailable or
/// cluster.owner_timeout naming `node`.
core::error from_status(const grpc::Status& s, const std::string& node);

/// cluster.owner_unavailable for a write not sent at all: the owner `node` is known to be down.
core::error owner_down(const std::string& node);

}  // namespace weir::cluster
