// weir::gateway cross-unit batch — `POST /v1/spaces/{space}/batch`: one request that carries a
// batch for each of several datasets, of one object or many. Each becomes the write a
// `POST …/datasets/{dataset}/records` would be, and all are applied at once: writes to different
// units go to their shards (or owners) side by side and share the store's group commits, where
// separate requests on one connection would wait for each other's answers. Pure mapping (body →
// commands, outcomes → answer body); the session does the I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "actors/write_command.hpp"
#include "core/document_limits.hpp"
#include "core/result.hpp"

namespace weir::gateway {

/// The most writes one cross-unit batch may carry (each is a write of its own to its unit).
inline constexpr std::size_t max_cross_unit_writes = 1000;

/// What `method path` names when it is the cross-unit batch route: its space (decoded), or
/// method.not_allowed (405, details.allow "POST") / request.invalid_field (a bad
/// percent-escape). nullopt for any other path.
std::optional<core::result<std::string>> match_cross_unit_batch(std::string_view method,
                                                                std::string_view path);

/// The writes of a cross-unit batch body, each checked as runtime::submit would check it
/// (actors::check_write against `limits`) and as its owner will check its records once stamped
/// (actors::check_batch_as_stored; `nul_allowed`: the store holds U+0000), so that a bad request
/// is refused before any unit takes any of it. `idempotency_key` ("" none) gives each write the
/// key core::batch_write_key derives from it and the write's target.
/// Errors (all 400; a write's own error carries `details.write`, its index in `writes`):
/// request.not_object, request.unknown_field, request.missing_field, request.invalid_field,
/// batch.too_many_writes, batch.duplicate_target (the same objectId and dataset twice), and every
/// error of a single batch (`POST …/records`).
core::result<std::vector<actors::write_command>> parse_cross_unit_batch(
    const std::string& space, boost::json::value body, std::string_view idempotency_key,
    const core::document_limits& limits, bool nul_allowed = true);

/// The answer to a cross-unit batch whose writes were all submitted: `{"writes":[…],"failed":n}`,
/// write i's outcome at index i, `{"status":200,"versionId":…}` (with `"replayed":true` when it
/// was answered from its idempotency key) or `{"status":<its HTTP status>,"error":{…}}`.
std::string cross_unit_batch_answer(
    const std::vector<std::optional<core::result<actors::write_outcome>>>& outcomes);

}  // namespace weir::gateway
