// Must not compile (tests/CMakeLists.txt: TypedActors.ASendTheReceiverDoesNotListDoesNotCompile):
// a unit's registry entry (unit_actor) has no handler for fail_msg, which only query actors and
// space views hear. Untyped, the send would compile and the message be dropped at run time.
#include <caf/send.hpp>

#include "actors/messages.hpp"

void send_what_a_unit_does_not_hear(const weir::actors::unit_actor& unit) {
  caf::anon_send(unit, weir::actors::fail_msg{"reason", "code"});
}
