// The behaviours of a typed actor's passing states (actors/typed_states.hpp), on a real actor
// system: a waiting state keeps every message it does not handle for the next behaviour, in the
// order it came; a dropping state discards them.
#include "actors/typed_states.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace weir::actors {
namespace {

// Text, a number, and a switch to the serving behaviour.
using probe =
    caf::typed_actor<caf::reacts_to<std::string>, caf::reacts_to<int>, caf::reacts_to<double>>;

// Reports each message it serves to `out`.
probe::behavior_type serving(probe::pointer, caf::actor out) {
  return {
      [out](const std::string& s) { caf::anon_send(out, "text " + s); },
      [out](int x) { caf::anon_send(out, "number " + std::to_string(x)); },
      [out](double) { caf::anon_send(out, std::string{"switch again"}); },
  };
}

probe::behavior_type waiting(probe::pointer self, caf::actor out) {
  return waiting_state<probe>([self, out](double) {
    caf::anon_send(out, std::string{"serving"});
    self->become(serving(self, out));
  });
}

probe::behavior_type dropping(probe::pointer self, caf::actor out) {
  return dropping_state<probe>([self, out](double) {
    caf::anon_send(out, std::string{"serving"});
    self->become(serving(self, out));
  });
}

// The next `n` reports, or what came before a 10-second deadline.
std::vector<std::string> reports(caf::scoped_actor& self, std::size_t n) {
  std::vector<std::string> got;
  bool late = false;
  while (got.size() < n && !late) {
    self->receive([&](const std::string& s) { got.push_back(s); },
                  caf::after(std::chrono::seconds{10}) >> [&] { late = true; });
  }
  return got;
}

struct TypedStates : ::testing::Test {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
};

TEST_F(TypedStates, AWaitingStateKeepsWhatItDoesNotHandleForTheNextBehaviourInOrder) {
  caf::scoped_actor self{sys};
  auto a = sys.spawn(waiting, caf::actor{self});
  self->send(a, std::string{"a"});
  self->send(a, 1);
  self->send(a, std::string{"b"});
  self->send(a, 2.0);
  self->send(a, 3);
  EXPECT_EQ(reports(self, 5),
            (std::vector<std::string>{"serving", "text a", "number 1", "text b", "number 3"}));
  self->send_exit(a, caf::exit_reason::user_shutdown);
}

TEST_F(TypedStates, ADroppingStateDiscardsWhatItDoesNotHandle) {
  caf::scoped_actor self{sys};
  auto a = sys.spawn(dropping, caf::actor{self});
  self->send(a, std::string{"dropped"});
  self->send(a, 7);
  self->send(a, 2.0);
  self->send(a, std::string{"kept"});
  self->send(a, 9);
  // Dropped messages would have come before "kept": the reports are in the order sent.
  EXPECT_EQ(reports(self, 3), (std::vector<std::string>{"serving", "text kept", "number 9"}));
  self->send_exit(a, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace weir::actors
