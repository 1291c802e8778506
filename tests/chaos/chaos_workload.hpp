// weir::chaos::chaos_workload — the writers of the fault-injection harness and the model the
// checker holds them to. Each record belongs to one writer, so its operations are sequential
// and each outcome is known: acknowledged (200), refused (an answer that says nothing was
// applied), or unknown (no answer, a timeout, write.outcome_unknown, an owner that stayed
// unreachable…). Every write puts a unique token in the record's `tok`; the checker then asks
// of what PostgreSQL holds: is it the token of the last acknowledged write, or of an unknown one
// after it — never a refused one, never an older one. Writers use the HTTP write API (PUT,
// update-op PATCH, JSON Patch, batch, DELETE), gRPC Data (PutRecord), plain SQL on
// weir_records, and `$inc` on a shared counter whose total must land between the acknowledged
// and the acknowledged-plus-unknown increments.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "chaos_cluster.hpp"

namespace weir::chaos {

enum class outcome { acked, refused, unknown };

/// What a write's answer says about whether it was applied.
outcome classify(unsigned status, const std::string& body);

/// Objects the writers use (each its own unit), the SQL writer's, and the counter's.
std::vector<std::string> workload_objects();
inline constexpr const char* sql_object = "sqlrows";
inline constexpr const char* counter_object = "counters";
/// The model's name for the space's property documents (object "", dataset "objects"): the
/// documents of objects d0…d3, written with PUT, JSON Patch and DELETE of the object.
inline constexpr const char* docs_object = "#docs";
inline constexpr int doc_objects = 4;

class chaos_workload {
 public:
  chaos_workload(chaos_cluster& cluster, std::uint64_t seed, int http_writers);
  ~chaos_workload();

  void start();
  /// Stops issuing writes and waits for those in flight (quiet point, end).
  void pause();
  void resume();
  void stop();

  /// id → tok of what PostgreSQL holds for `object` (dataset items).
  std::map<std::string, std::string> stored(const std::string& object, bool* ok = nullptr);

  /// Checks what PostgreSQL holds against the model (call while paused). Appends what
  /// diverges, then takes what is stored as the new starting point of every record.
  void check(std::vector<std::string>& divergences);

  struct totals {
    std::uint64_t acked = 0, refused = 0, unknown = 0, sql_acked = 0, grpc_acked = 0,
                  incs_acked = 0;
  };
  totals counts() const;
  /// Every instant a write was acknowledged (for the unavailability after each fault).
  std::vector<std::chrono::steady_clock::time_point> ack_times() const;

 private:
  struct op {
    std::string tok;  // "" = deleted
    outcome result;
    std::string what;  // for the report
  };
  struct record_model {
    std::vector<op> ops;
  };
  void http_writer(int w);
  void sql_writer();
  void counter_writer();
  void grpc_writer();
  void doc_writer();
  /// One HTTP write under its own Idempotency-Key, retried under it (twice at most) while its
  /// outcome is unknown; `via` gets the members it went to.
  outcome keyed_http(std::mt19937_64& rng, const std::string& method, const std::string& target,
                     const std::string& body, std::map<std::string, std::string> headers,
                     const std::string& key, std::string& via);
  void record(const std::string& key, op o);
  void acked_now();
  bool wait_turn();  // false when stopping
  int pick_member(std::mt19937_64& rng);

  chaos_cluster& cluster_;
  std::uint64_t seed_;
  int http_writers_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> paused_{false};
  std::atomic<int> in_flight_{0};
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::map<std::string, record_model> model_;  // "object/id"
  std::int64_t counter_base_ = 0;
  std::uint64_t incs_acked_ = 0, incs_unknown_ = 0;
  totals totals_;
  std::vector<std::chrono::steady_clock::time_point> acks_;
};

}  // namespace weir::chaos
