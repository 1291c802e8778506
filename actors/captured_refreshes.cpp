// Change capture's re-reads on this node (runtime::take_captured, refresh_held): a captured
// transaction becomes refresh commands, each routed to the owner of its unit in force at the
// commit and paced node-wide (refresh_pacer); the owner's shard reads the rows again and
// publishes what differs. Whole datasets and every held unit of a member (whole_refresh) stand
// in for the rows of a transaction too large for the reader to keep their keys.
#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include <boost/json/array.hpp>
#include <caf/send.hpp>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/whole_refresh.hpp"
#include "core/rendezvous.hpp"
#include "log/log.hpp"

namespace weir::actors {

void runtime::refresh_held(write_command cmd, write_callback done) {
  // Only the node's own whole refresh lane starts a whole refresh on a shard ("now"); from
  // another member it is a request to queue one, like any.
  if (cmd.body.is_object()) {
    cmd.body.as_object().erase("now");
  }
  store::unit_key unit{cmd.space, cmd.object};
  impl_->refresh_local(unit, std::move(cmd), std::move(done));
}

void runtime::impl::refresh_local(const store::unit_key& unit, write_command cmd,
                                  write_callback done) {
  if (is_every_held_unit_refresh(cmd)) {
    // A transaction past every bound of the change reader: every unit held here, whole, in the
    // background (whole_refresh.hpp).
    refresh_every_held_unit(*this);
    done(write_outcome{});
    return;
  }
  // Only a shard that holds the unit here. A remote shard's owner is the one change capture
  // asked (by the owners in force at the transaction's commit), or took the unit over later
  // and loaded it after that commit.
  write_msg m{std::move(cmd), std::move(done)};
  {
    auto key = unit_registry_key(unit);
    auto& s = stripe_of(key);
    std::lock_guard lock{s.mu};
    auto it = s.shards.find(key);
    if (it != s.shards.end() && it->second.owner.empty()) {
      caf::anon_send(it->second.actor, std::move(m));
      return;
    }
  }
  m.done(write_outcome{});
}

void runtime::take_captured(store::captured_txn txn, std::function<void(bool taken)> applied) {
  // With elastic membership the transaction goes to the owners in force at its commit, whatever
  // this node's view: a unit's new owner loaded it after the change of owners committed, so it
  // holds every transaction before that, and hears of every one after.
  // One refresh per (unit, dataset), its ids in the order they came, at most ids_per_refresh
  // per command: a large transaction's refresh must fit one forwarded message
  // (http.maxBodyBytes). Datasets the reader kept no ids of are refreshed whole, and a
  // transaction it kept nothing of but the fact has every member refresh every unit it holds.
  struct routed {
    write_command cmd;
    std::optional<std::string> member;  // every unit this member holds ("" this node)
  };
  std::vector<routed> commands;
  if (txn.everything) {
    std::vector<std::string> members;
    if (txn.owners && !txn.owners->empty()) {
      members = *txn.owners;
    } else if (impl_->link) {
      members = impl_->link->members();
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    if (members.empty()) {
      members.emplace_back();
    }
    for (auto& m : members) {
      commands.push_back({every_held_unit_command(), std::move(m)});
    }
  }
  for (auto& w : txn.whole) {
    commands.push_back(
        {whole_refresh_command(std::move(w.space), std::move(w.object), std::move(w.dataset)),
         std::nullopt});
  }
  for (auto& r : txn.rows) {
    write_command* last = commands.empty() ? nullptr : &commands.back().cmd;
    if (!last || last->space != r.space || last->object != r.object || last->dataset != r.dataset ||
        !last->body.is_array() || last->body.as_array().size() == ids_per_refresh) {
      write_command cmd;
      cmd.kind = write_kind::refresh_records;
      cmd.space = std::move(r.space);
      cmd.object = std::move(r.object);
      cmd.dataset = std::move(r.dataset);
      cmd.body = boost::json::array{};
      commands.push_back({std::move(cmd), std::nullopt});
    }
    commands.back().cmd.body.as_array().emplace_back(std::move(r.id));
  }
  if (commands.empty()) {
    applied(true);
    return;
  }
  struct tally {
    std::atomic<std::size_t> left;
    std::atomic<bool> taken{true};
    std::function<void(bool)> applied;
  };
  auto t = std::make_shared<tally>();
  t->left = commands.size();
  t->applied = std::move(applied);
  for (auto& [cmd, member] : commands) {
    auto space = cmd.space;
    auto answered = [t, space](const core::result<write_outcome>& r) {
      if (!r) {
        // Not taken (the owner unreachable, overloaded, stopping, a failed read): the reader
        // reads the transaction again, rather than leave the owner's records stale.
        t->taken = false;
        log::warn("change capture: an owner did not take a change; it will be read again",
                  {{"space", space}, {"code", r.error().code}, {"error", r.error().message}});
      }
      if (t->left.fetch_sub(1) == 1) {
        t->applied(t->taken.load());
      }
    };
    // Paced node-wide: each refresh of a held unit takes a place in the store's queue.
    impl_->refreshes->run([this, cmd = std::move(cmd), member = std::move(member),
                           answered = std::move(answered),
                           owners = txn.owners](std::function<void()> finished) mutable {
      auto done = [answered = std::move(answered),
                   finished = std::move(finished)](core::result<write_outcome> r) {
        answered(r);
        finished();
      };
      if (member) {
        // Every unit a member holds: the member named, or this node alone.
        if (member->empty() || !impl_->link || *member == impl_->link->self_id()) {
          refresh_held(std::move(cmd), std::move(done));
        } else {
          impl_->link->forward_write(*member, std::move(cmd), std::move(done));
        }
        return;
      }
      if (!owners || owners->empty() || !impl_->link) {
        submit(std::move(cmd), std::move(done));
        return;
      }
      const auto& owner =
          (*owners)[core::rendezvous_owner(*owners, core::unit_name(cmd.space, cmd.object))];
      if (owner == impl_->link->self_id()) {
        refresh_held(std::move(cmd), std::move(done));
      } else {
        impl_->link->forward_write(owner, std::move(cmd), std::move(done));
      }
    });
  }
}

}  // namespace weir::actors
