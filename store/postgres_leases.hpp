// weir::store::postgres_leases — elastic cluster membership kept in PostgreSQL, next to the
// records: each member's lease row (weir_members) and the one membership row (weir_membership)
// that says which members own units, under an epoch that grows by one with every change.
//
// Why lease rows rather than the headless Service's DNS: a cluster on the postgres backend
// already depends on PostgreSQL and nothing else, the lease's expiry is judged by one clock
// (the database's), a draining member can say so before it goes, and the record lives where
// the writes commit: each of Weir's write transactions checks it under a shared advisory lock
// (fence_lock) and commits only units it names this member the owner of (postgres_store's
// fence), while a change of owners takes that lock exclusively, so it waits for those commits
// and a new owner's load sees them all. The change also writes a
// logical message into the change stream, so change capture knows which owners were in force
// at each transaction it reads (postgres_change_reader).
//
// One renew() per round: the member extends its own lease, reads every lease, and when the
// live, non-draining members differ from the owners on record, moves the record to them
// (conditionally on the epoch it read, so members racing to do it change it once). Blocking
// libpq calls: run it on a thread of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

struct pg_conn;  // libpq's PGconn, kept out of this header

namespace weir::store {

/// One member's lease as the database sees it.
struct member_lease {
  std::string id;
  std::string peer;  ///< "host:port" other members reach its peer listener on
  std::string http;  ///< "host:port" clients reach its HTTP on
  bool draining = false;
  bool live = false;               ///< the lease has not expired
  std::int64_t expires_in_ms = 0;  ///< negative once expired
};

/// The cluster's membership after one round.
struct membership_round {
  std::uint64_t epoch = 0;           ///< 0: no membership recorded yet
  std::vector<std::string> owners;   ///< sorted ids of the members owning units under `epoch`
  std::vector<member_lease> leases;  ///< every lease row, sorted by id
};

/// The logical message prefix of a membership change in the change stream; its content is
/// "<epoch>\n<owner>\n<owner>...".
inline constexpr const char* membership_message_prefix = "weir-membership";

class postgres_leases {
 public:
  /// The advisory lock of the write fence: each of Weir's write transactions takes it shared
  /// for its ownership check and COMMIT (postgres_store), a change of owners exclusively.
  /// PostgreSQL queues advisory lock requests fairly, so commits do not starve a change.
  static constexpr std::int64_t fence_lock = 7316575811235112795;

  struct options {
    std::string url;
    std::string member;  ///< this member's id
    std::string peer;    ///< its advertised peer address
    std::string http;    ///< its advertised HTTP address
    std::int64_t lease_ms = 3000;
  };

  explicit postgres_leases(options opts);
  ~postgres_leases();
  postgres_leases(const postgres_leases&) = delete;
  postgres_leases& operator=(const postgres_leases&) = delete;

  /// Renews this member's lease (`draining` says it is leaving: it stops owning units), and,
  /// with `may_record`, records the live members as the owners when they changed. Reconnects
  /// as needed. Errors: store.unavailable (the database could not be reached or refused a
  /// statement).
  core::result<membership_round> renew(bool draining, bool may_record = true);

  /// Removes this member's lease and, when it was an owner, records the owners without it.
  void leave();

  /// Parses a membership message's content; nullopt when malformed.
  static std::optional<std::pair<std::uint64_t, std::vector<std::string>>> parse_message(
      std::string_view content);

  /// The membership on record over connection `c` (epoch 0 and no owners when none is): what
  /// change capture starts from. Errors: store.unavailable.
  static core::result<std::pair<std::uint64_t, std::vector<std::string>>> read_owners(::pg_conn* c);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::store
