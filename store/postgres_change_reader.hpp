// weir::store::postgres_change_reader — change capture for the PostgreSQL store: the rows that
// other programs commit to weir_records, read from one logical replication stream per cluster
// (the built-in `pgoutput` plugin over the publication `weir_changes`, from the slot
// `weir_changes`) and handed, one transaction at a time in commit order, to a capture_sink.
//
// Every member runs one; one at a time reads. Leadership is a session advisory lock: the member
// that holds it opens the stream, the others try again every second, so when the reader dies
// (its sessions end, and with them the lock) another one takes over within about a second of
// PostgreSQL noticing. The slot itself is the second guard: PostgreSQL lets one session at a
// time stream from it. The slot's confirmed position advances past a transaction only once the
// sink said its rows were applied, so a new reader resumes exactly there: nothing is missed,
// and what is read twice (applied but not yet confirmed when the reader died) changes nothing,
// because owners re-read such rows and compare. Weir's own transactions carry a logical message
// (prefix "weir", naming the member) and are skipped: their owners applied them already. With
// elastic membership the stream also carries each change of the owners (prefix
// "weir-membership", postgres_leases); each transaction is handed on with the owners in force
// at its commit, which route it. A transaction's row keys are kept until its COMMIT in bounded
// memory (captured_rows: past its bounds, whole datasets, or every held unit, are read again),
// and reading pauses while the transactions handed on and not yet applied hold 200,000 keys.
//
// libpq's replication protocol is used directly (START_REPLICATION in COPY BOTH mode, pgoutput
// protocol version 1): the format is small and documented, and no library in Debian parses it.
#pragma once

#include <memory>
#include <string>

#include "store/durable_store.hpp"

namespace weir::store {

class postgres_change_reader {
 public:
  struct options {
    std::string url;     ///< the store's connection string
    std::string member;  ///< this member's name, as other members see it
  };

  /// Starts the thread that competes for the stream and reads it.
  postgres_change_reader(options opts, capture_sink sink);
  ~postgres_change_reader();
  postgres_change_reader(const postgres_change_reader&) = delete;
  postgres_change_reader& operator=(const postgres_change_reader&) = delete;

  /// Ends the stream (what was not applied yet is read again by the next reader) and joins
  /// the thread. Idempotent.
  void stop();

  capture_status status() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::store
