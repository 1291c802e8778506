// weir::actors::windowed_sink — where a windowed subscription's frames go (windowed-subscribe
// §4): implemented by the gateway's windowed stream session, called from actor threads. Events
// are the shared bytes of one `changes` element, encoded once per window; the session batches
// every event it holds into one frame and bounds them by the subscription's mailboxCapacity.
// CAF-free.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace weir::actors {

class windowed_sink {
 public:
  virtual ~windowed_sink() = default;
  /// Registered: `snapshot` is the snapshot frame's data (`{"records":…}`); `ready` and the
  /// snapshot go out now. Called once, before any event.
  virtual void opened(std::shared_ptr<const std::string> snapshot) = 0;
  /// One element of a `changes` frame.
  virtual void event(std::shared_ptr<const std::string> ev) = 0;
  /// The subscription ended on the server's side: `closed` with `reason` (terminal).
  virtual void closed(std::string_view reason) = 0;
  /// It could not be opened (e.g. 410 object.deleted): answer with the error envelope. Called
  /// instead of opened().
  virtual void refused(core::error e) = 0;
};

}  // namespace weir::actors
