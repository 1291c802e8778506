// weir::actors::check_write — what a write must be before any node acts on it: its ids, the
// shape of its body for its kind, and every document it carries within the record limits. The
// node that receives a write runs it before it applies or forwards it, so a bad write never
// reaches an owner; an owner runs it again on what a member forwarded (a peer is not a
// validator). What needs the unit's records (an update applied, a patch's result, the exact size
// of the stamped record) is the shard's to check.
#pragma once

#include "actors/write_command.hpp"
#include "core/document_limits.hpp"
#include "core/result.hpp"

namespace weir::actors {

/// Errors: the id rules (`request.invalid_field`, `request.invalid_utf8`), `request.not_object`,
/// `record.id_mismatch`, the update and JSON Patch grammars (`update.*`, `patch.*`), the batch
/// shape (`request.invalid_field`, `request.unknown_field`, `request.missing_field`), and the
/// document limits (`record.too_deep`, `record.too_many_members`, `record.key_too_long`,
/// `record.invalid_number`). Nothing is applied when it fails.
core::result<void> check_write(const write_command& cmd, const core::document_limits& limits);

/// What the owning shard checks of a batch's records once they are stamped (the size and the
/// member count with `_ver`, and on a store that cannot hold U+0000, its absence), checked
/// before any unit takes the write: a cross-unit batch refuses the whole request when one of
/// its writes would fail them. The stamp's size is taken at its largest (a versionId of 12
/// characters), so a record within 12 bytes of records.maxBytes may be refused here that the
/// owner would have taken. `cmd` is a batch that passed check_write.
core::result<void> check_batch_as_stored(const write_command& cmd,
                                         const core::document_limits& limits, bool nul_allowed);

}  // namespace weir::actors
