// weir::actors typed states — the behaviours of a typed actor's passing states (a shard loading
// its unit, waiting for a hand-over, or failed), which handle a few of its messages and must
// still name every other one: CAF 0.17's typed_behavior accepts only a handler set that matches
// the actor's interface exactly. These build the rest from the interface, so a message added to
// the interface is covered in every state without being listed there.
// Internal to actors/: includes CAF.
#pragma once

#include <tuple>
#include <type_traits>

#include <caf/detail/type_traits.hpp>
#include <caf/replies_to.hpp>
#include <caf/skip.hpp>
#include <caf/typed_behavior.hpp>

namespace weir::actors {

namespace typed_states_detail {

/// The message a one-argument handler takes.
template <class F>
using handled_t = std::decay_t<
    typename caf::detail::tl_head<typename caf::detail::get_callable_trait<F>::arg_types>::type>;

/// The message of a one-message signature without a reply (caf::reacts_to<M>).
template <class Sig>
struct input_of;
template <class M>
struct input_of<caf::typed_mpi<caf::detail::type_list<M>, caf::output_tuple<void>>> {
  using type = M;
};

/// A handler for every signature whose message is not among `Handled`, made by `Make<M>`.
template <template <class> class Make, class... Handled, class... Sigs>
auto others(caf::detail::type_list<Sigs...>) {
  return std::tuple_cat([] {
    using M = typename input_of<Sigs>::type;
    if constexpr ((std::is_same_v<M, Handled> || ...)) {
      return std::tuple<>{};
    } else {
      return std::tuple{Make<M>{}()};
    }
  }()...);
}

// By const reference: neither copies a message that is shared.
template <class M>
struct skipper {
  auto operator()() const {
    return [](const M&) -> caf::skip_t { return caf::skip; };
  }
};
template <class M>
struct dropper {
  auto operator()() const {
    return [](const M&) {};
  }
};

template <class Iface, template <class> class Make, class... Fs>
typename Iface::behavior_type with_others(Fs... fs) {
  auto rest = others<Make, handled_t<Fs>...>(typename Iface::signatures{});
  return std::apply(
      [&](auto... r) {
        return typename Iface::behavior_type{std::move(fs)..., std::move(r)...};
      },
      std::move(rest));
}

}  // namespace typed_states_detail

/// A behaviour of an actor of interface `Iface` that handles `fs` (one message each) and leaves
/// every other message in the mailbox for a later behaviour, in the order it came.
template <class Iface, class... Fs>
typename Iface::behavior_type waiting_state(Fs... fs) {
  return typed_states_detail::with_others<Iface, typed_states_detail::skipper>(std::move(fs)...);
}

/// A behaviour of an actor of interface `Iface` that handles `fs` and drops every other message
/// unanswered (a state after which nothing else is served).
template <class Iface, class... Fs>
typename Iface::behavior_type dropping_state(Fs... fs) {
  return typed_states_detail::with_others<Iface, typed_states_detail::dropper>(std::move(fs)...);
}

}  // namespace weir::actors
