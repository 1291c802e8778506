// How a query actor turns an update into frames: the rows it changes (an unbounded query's
// matches, a bounded query's window) and the bodies it is encoded into, once per transfer-mode
// slot in use (Arc change sets, the JSON-set fallback, RFC 6902 patches), for every subscriber.
// See query_state.hpp.
#include "actors/query_state.hpp"

namespace weir::actors::query_impl {

std::string fallback_change_set(const core::window_delta& d, const old_rows& old) {
  core::change_set cs;
  auto gone = old.removed;
  for (const auto& u : d.upserts) {
    auto doc = core::parse_doc(*u.rec);
    if (!u.added) {
      if (auto it = old.replaced.find(u.rec->id); it != old.replaced.end()) {
        if (boost::json::serialize(core::parse_doc(*it->second.second)) ==
            boost::json::serialize(doc)) {
          continue;  // the same canonical JSON: in both sets
        }
        gone.push_back(it->second);
      }
    }
    cs.added.emplace_back(std::move(doc));
  }
  std::stable_sort(gone.begin(), gone.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [rank, r] : gone) {
    cs.removed.emplace_back(core::parse_doc(*r));
  }
  std::string out;
  core::append_change_set_json(out, cs);
  return out;
}

std::string arc_change_set(const core::window_delta& d) {
  std::vector<record_ptr> added, replaced, removed;
  for (const auto& u : d.upserts) {
    (u.added ? added : replaced).push_back(u.rec);
  }
  for (const auto& r : d.removed) {
    removed.push_back(r.rec);
  }
  std::string out;
  core::append_change_set(out, added, replaced, removed);
  return out;
}

std::string document_patch(const record_ptr& before, const record_ptr& after) {
  return boost::json::serialize(core::json_diff(core::parse_doc(*before), core::parse_doc(*after)));
}

void emit_arc(query_ptr self, std::optional<std::string> cs_json,
              std::optional<std::string> patch_json) {
  auto& st = self->state;
  std::array<body_ptr, slot_count> bodies{};
  std::array<bool, slot_count> baseline{};
  auto used = [&st](std::size_t slot) { return st.slot_subs[slot] > 0; };
  auto paging = st.paging();
  auto as_view = [](const std::optional<std::string>& s) {
    return s ? std::optional<std::string_view>{*s} : std::nullopt;
  };
  if (st.single()) {
    // Non-array data: every mode sends data and never a change set (§5); patch mode sends the
    // document's patch instead, once it has a baseline. The whole value goes to the data modes,
    // and to everyone when there is no patch (a baseline); with only patch and AG-UI
    // subscribers and a patch, nobody needs it.
    bool plain = used(legacy_slot) || used(full_slot) || used(delta_slot);
    body_ptr b;
    if (plain || !patch_json) {
      b = std::make_shared<const std::string>(st.whole_body(std::nullopt));
    }
    bodies[legacy_slot] = bodies[full_slot] = bodies[delta_slot] = b;
    baseline[legacy_slot] = baseline[full_slot] = baseline[delta_slot] = true;
    if (used(patch_slot)) {
      bodies[patch_slot] = patch_json
                               ? std::make_shared<const std::string>(core::encode_result_body(
                                     std::nullopt, std::nullopt, paging, *patch_json))
                               : b;
      baseline[patch_slot] = !patch_json;
    }
    if (used(ag_ui_slot)) {
      bodies[ag_ui_slot] = std::make_shared<const std::string>(
          patch_json ? core::encode_state_delta(*patch_json)
                     : core::encode_state_snapshot(st.document_json()));
      baseline[ag_ui_slot] = !patch_json;
    }
  } else {
    // The rows are written straight into each body that carries them: one walk and one copy
    // of every row's bytes per body, whatever the number of subscribers.
    if (used(full_slot)) {
      bodies[full_slot] = std::make_shared<const std::string>(st.whole_body(std::nullopt));
      baseline[full_slot] = true;
    }
    // A collection asked for patches gets delta's change sets (arc-hub decision 9).
    if (used(delta_slot) || used(patch_slot)) {
      bodies[delta_slot] = bodies[patch_slot] = std::make_shared<const std::string>(
          core::encode_result_body(std::nullopt, as_view(cs_json), paging));
    }
    if (used(legacy_slot)) {
      bodies[legacy_slot] = std::make_shared<const std::string>(st.whole_body(as_view(cs_json)));
      baseline[legacy_slot] = true;
    }
  }
  auto now_ms = unix_now_ms();
  for (auto& s : st.subs) {
    if (s.windowed_stream) {
      continue;
    }
    if (s.live->load(std::memory_order_relaxed)) {
      auto slot = slot_of(s);
      deliver(s, bodies[slot], now_ms, baseline[slot], st.origin_ns);
    }
  }
}

core::window_delta apply_changes(query_state& st, const std::vector<view_change>& changes,
                                 old_rows* old) {
  core::window_delta d;
  auto& reader = core::thread_doc_reader();
  auto position = [&](const record_ptr& r, const core::doc_ptr& doc) {
    return doc ? st.rows->position_of(*doc) : st.rows->position_of(reader.read(*r));
  };
  // Old ranks first, for the removed list's order.
  std::vector<std::pair<std::size_t, core::window_removal>> removed;
  std::vector<core::sort_position> before_pos(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.before) {
      before_pos[i] = position(c.before, c.before_doc);
      if (!c.after) {
        auto reason =
            c.after_exists ? core::removal_reason::filtered_out : core::removal_reason::deleted;
        auto at = st.rows->lower_bound(before_pos[i]).second;
        removed.emplace_back(at, core::window_removal{c.before, reason});
      } else if (old) {
        auto at = st.rows->lower_bound(before_pos[i]).second;
        old->replaced.emplace(c.before->id, std::pair{at, c.before});
      }
    }
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.before) {
      st.rows->erase(before_pos[i]);
      st.account(-static_cast<std::int64_t>(c.before->json.size()));
      if (!c.before->has_identity) {
        --st.no_identity;
      }
    }
  }
  std::vector<core::sort_position> after_pos(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.after) {
      after_pos[i] = position(c.after, c.after_doc);
      st.rows->insert(c.after, after_pos[i]);
      st.account(static_cast<std::int64_t>(c.after->json.size()));
      if (!c.after->has_identity) {
        ++st.no_identity;
      }
    }
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.after) {
      auto rank = st.rows->lower_bound(after_pos[i]).second;
      d.upserts.push_back(core::window_upsert{rank, c.after, !c.before, c.ops});
    }
  }
  std::sort(d.upserts.begin(), d.upserts.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  std::stable_sort(removed.begin(), removed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [at, r] : removed) {
    if (old) {
      old->removed.emplace_back(at, r.rec);
    }
    d.removed.push_back(std::move(r));
  }
  if (st.q->count && st.total) {
    std::int64_t t = static_cast<std::int64_t>(*st.total);
    for (const auto& c : changes) {
      t += (c.after ? 1 : 0) - (c.before ? 1 : 0);
    }
    st.total = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t));
  }
  return d;
}

core::window_delta apply_delta(query_state& st, const core::window_delta& in, old_rows* old) {
  core::window_delta d = in;
  std::unordered_map<std::string_view, const record_ptr*> shown;
  shown.reserve(st.window.size());
  for (const auto& r : st.window) {
    shown.emplace(r->id, &r);
  }
  auto rank_of = [&st](const record_ptr* p) {
    return static_cast<std::size_t>(p - st.window.data());
  };
  for (auto& r : d.removed) {
    if (auto it = shown.find(r.rec->id); it != shown.end()) {
      r.rec = *it->second;
      if (old) {
        old->removed.emplace_back(rank_of(it->second), r.rec);
      }
    }
  }
  std::int64_t bytes = 0;
  for (const auto& r : d.removed) {
    bytes -= static_cast<std::int64_t>(r.rec->json.size());
    if (!r.rec->has_identity) {
      --st.no_identity;
    }
  }
  for (const auto& u : d.upserts) {
    if (!u.added) {
      if (auto it = shown.find(u.rec->id); it != shown.end()) {
        if (old) {
          old->replaced.emplace((*it->second)->id, std::pair{rank_of(it->second), *it->second});
        }
        bytes -= static_cast<std::int64_t>((*it->second)->json.size());
        if (!(*it->second)->has_identity) {
          --st.no_identity;
        }
      }
    }
    bytes += static_cast<std::int64_t>(u.rec->json.size());
    if (!u.rec->has_identity) {
      ++st.no_identity;
    }
  }
  shown.clear();
  core::apply_window_delta(st.window, d);
  st.account(bytes);
  if (in.total) {
    st.total = in.total;
  }
  return d;
}

}  // namespace weir::actors::query_impl
