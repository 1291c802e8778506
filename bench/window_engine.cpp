// weir_window_engine — what one write costs the window engine itself, without HTTP, the store or
// the actors: a dataset of N records in an order index (core::order_index), one window of 50 on
// it (core::window_view), then writes of the kinds a chat sees — a new row at the top, an edit of
// a row in the window, a delete in the window (backfilled from the index) — each applied to the
// index and the window and diffed (end_write), as the shard does per write. Then the passes a
// new filter costs when no index bounds it, over N records as the store holds them
// ({"id","text","_ver"}, bench/window's shape): a window's (first_matches::scan, 50 rows in
// "-id" order; text equal to a value none has, then text matching "^y", which none does) and
// an unbounded query's (all_matches::scan, text unequal to a value none has; then text in a list
// of 9,000 values none has). Last, two index builds over those records whose first key ties past
// a prefix's 7 bytes: on `text` (the same in every record, then W more such records inserted one
// by one) and on `-_ver.id`.
//
//   weir_window_engine --records N [--writes W]
// prints {"records":N,"build_ms":…,"insert_ns":…,"update_ns":…,"delete_ns":…,
//         "window_pass_ms":…,"regex_pass_ms":…,"unbounded_pass_ms":…,"long_in_pass_ms":…,
//         "tied_text_build_ms":…,"tied_text_build_maxrss_kb":…,"tied_insert_ns":…,
//         "version_build_ms":…}.
#include <sys/resource.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>

#include "core/all_matches.hpp"
#include "core/change_ops.hpp"
#include "core/first_matches.hpp"
#include "core/order_index.hpp"
#include "core/version_id.hpp"
#include "core/window_view.hpp"

namespace {

using namespace weir::core;
using clock_type = std::chrono::steady_clock;

record_ptr make(long i, long version) {
  boost::json::object d;
  d["id"] = "r" + std::to_string(i);
  d["text"] = "a message of some twenty bytes";
  d["seq"] = version;
  return make_record(d);
}

struct write_step {
  record_step s;
  boost::json::object bdoc, adoc;
  sort_position bpos, apos;
};

}  // namespace

int main(int argc, char** argv) {
  long records = 1000, writes = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--records")) {
      records = std::stol(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--writes")) {
      writes = std::stol(argv[i + 1]);
    }
  }
  auto spec = sort_spec::parse(std::vector<std::string>{"-seq"}).value();
  window_view::index idx{spec};
  record_set live;
  long version = 0;
  std::vector<record_ptr> all;
  for (long i = 0; i < records; ++i) {
    auto r = make(i, ++version);
    live.insert(r);
  }
  auto t0 = clock_type::now();
  idx.build(live.begin(), live.end());
  auto build_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  window_view view{idx, filter{}, 0, 50, false};
  view.fill();

  auto apply = [&](const record_ptr& before, const record_ptr& after) {
    write_step w;
    w.s.before = before;
    w.s.after = after;
    if (before) {
      w.bdoc = parse_doc(*before);
      w.bpos = spec.position_of(w.bdoc);
      w.s.before_doc = &w.bdoc;
      w.s.before_pos = &w.bpos;
      idx.erase(w.bpos);
      live.erase(live.find(std::string_view{before->id}));
    }
    if (after) {
      w.adoc = parse_doc(*after);
      w.apos = spec.position_of(w.adoc);
      w.s.after_doc = &w.adoc;
      w.s.after_pos = &w.apos;
      w.s.ops = std::make_shared<change_ops>(ops_for_replace(before ? &w.bdoc : nullptr, w.adoc));
      idx.insert(after, w.apos);
      live.insert(after);
    }
    view.apply(w.s);
    write_steps steps{{w.s.id(), &w.s}};
    return view.end_write(steps).has_value();
  };
  auto time = [&](auto&& one) {
    long changed = 0;
    auto start = clock_type::now();
    for (long i = 0; i < writes; ++i) {
      changed += one(i) ? 1 : 0;
    }
    auto ns = std::chrono::duration<double, std::nano>(clock_type::now() - start).count() / writes;
    if (changed == 0) {
      std::fprintf(stderr, "weir_window_engine: no write changed the window\n");
    }
    return ns;
  };
  long next_id = records;
  // A new row at the top (a chat message): enters the window, displaces its last row.
  auto insert_ns = time([&](long) { return apply(nullptr, make(next_id++, ++version)); });
  // An edit of a row inside the window (a reaction): updated in place.
  std::mt19937 rng{1};
  auto update_ns = time([&](long) {
    auto shown = view.visible();
    auto& victim = shown[rng() % shown.size()];
    auto doc = parse_doc(*victim);
    doc["text"] = "edited " + std::to_string(rng());
    return apply(victim, make_record(doc));
  });
  // A delete inside the window: the row goes, the next one is read back from the index.
  auto delete_ns = time([&](long) {
    auto shown = view.visible();
    return apply(shown[rng() % shown.size()], nullptr);
  });

  // The passes, on records as stored.
  std::vector<record_ptr> stored;
  stored.reserve(static_cast<std::size_t>(records));
  for (long i = 0; i < records; ++i) {
    stored.push_back(record_from_text(
        "{\"id\":\"r" + std::to_string(i) + "\",\"text\":\"" + std::string(20, 'x') +
        "\",\"_ver\":{\"id\":\"" + encode_version_id(static_cast<std::uint64_t>(i) + 1) + "\"}}"));
  }
  auto parse_filter = [](const char* text) {
    return filter::parse(boost::json::parse(text)).value();
  };
  auto order = sort_spec::parse(std::vector<std::string>{"-id"}).value();
  t0 = clock_type::now();
  auto window = first_matches::scan(stored, parse_filter(R"({"text":"y"})"), order, 50);
  auto window_pass_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  t0 = clock_type::now();
  auto prefixed =
      first_matches::scan(stored, parse_filter(R"({"text":{"$regex":"^y"}})"), order, 50);
  auto regex_pass_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  t0 = clock_type::now();
  auto unbounded = all_matches::scan(stored, parse_filter(R"({"text":{"$ne":"x"}})"));
  auto unbounded_pass_ms =
      std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  // An $in of 9,000 values none has (what a 64 KiB hub frame holds): its values are looked up,
  // not compared one by one, so it costs a record about what an equality does.
  boost::json::array values;
  for (int i = 0; i < 9000; ++i) {
    values.emplace_back("y" + std::to_string(i));
  }
  auto long_in =
      filter::parse(boost::json::object{{"text", boost::json::object{{"$in", std::move(values)}}}})
          .value();
  t0 = clock_type::now();
  auto in_none = all_matches::scan(stored, long_in);
  auto long_in_pass_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  if (window.count() != 0 || prefixed.count() != 0 || unbounded.rows().size() != stored.size() ||
      !in_none.rows().empty()) {
    std::fprintf(stderr, "weir_window_engine: a pass found what it should not\n");
    return 1;
  }
  // Builds over the stored records whose first key ties past the 7 bytes a prefix holds: the
  // same text in every record (an index on a field of few values), and versionIds, which share
  // their leading characters. The peak memory the text build adds is the process's maxrss
  // growth (it runs first, so nothing before it reached that peak).
  double tied_insert_ns = 0;
  auto build_of = [&](const char* key, long* maxrss_growth_kb) {
    window_view::index built{sort_spec::parse(std::vector<std::string>{key}).value()};
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    auto start = clock_type::now();
    built.build(stored.begin(), stored.end());
    auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    getrusage(RUSAGE_SELF, &after);
    if (maxrss_growth_kb) {
      *maxrss_growth_kb = after.ru_maxrss - before.ru_maxrss;
      // Then `writes` new records with the same text, one by one, as a unit's writes insert
      // them: each descent compares with records whose first key ties.
      std::vector<std::pair<record_ptr, sort_position>> more;
      for (long i = 0; i < writes; ++i) {
        auto r = record_from_text("{\"id\":\"n" + std::to_string(i) + "\",\"text\":\"" +
                                  std::string(20, 'x') + "\",\"_ver\":{\"id\":\"" +
                                  encode_version_id(static_cast<std::uint64_t>(records + i) + 1) +
                                  "\"}}");
        more.emplace_back(r, built.spec().position_of(parse_doc(*r)));
      }
      auto t = clock_type::now();
      for (auto& [r, pos] : more) {
        built.insert(r, pos);
      }
      tied_insert_ns =
          std::chrono::duration<double, std::nano>(clock_type::now() - t).count() / double(writes);
    }
    return ms;
  };
  long tied_maxrss_kb = 0;
  auto tied_text_build_ms = build_of("text", &tied_maxrss_kb);
  auto version_build_ms = build_of("-_ver.id", nullptr);
  std::printf(
      "{\"records\":%ld,\"build_ms\":%.1f,\"insert_ns\":%.0f,\"update_ns\":%.0f,\"delete_ns\":%."
      "0f,\"window_pass_ms\":%.1f,\"regex_pass_ms\":%.1f,\"unbounded_pass_ms\":%.1f,"
      "\"long_in_pass_ms\":%.1f,\"tied_text_build_ms\":%.1f,\"tied_text_build_maxrss_kb\":%ld,"
      "\"tied_insert_ns\":%.0f,\"version_build_ms\":%.1f}\n",
      records, build_ms, insert_ns, update_ns, delete_ns, window_pass_ms, regex_pass_ms,
      unbounded_pass_ms, long_in_pass_ms, tied_text_build_ms, tied_maxrss_kb, tied_insert_ns,
      version_build_ms);
  return 0;
}
