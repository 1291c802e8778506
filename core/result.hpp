// weir::core::result — a value or an error, for every boundary that can fail on client input.
// C++20 has no std::expected; this is the small subset Weir needs, with the same spelling.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <boost/json/object.hpp>

namespace weir::core {

/// An error a client can see: a stable dotted `code` (the protocol's own where it has one),
/// a `message` a person can act on, and optional structured `details`.
struct error {
  std::string code;
  std::string message;
  boost::json::object details;
};

/// Makes an error; `details` is optional.
inline error make_error(std::string code, std::string message, boost::json::object details = {}) {
  return error{std::move(code), std::move(message), std::move(details)};
}

/// Holds either a T or an error. Accessing the wrong alternative is a programmer error.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  result(core::error err) : v_(std::in_place_index<1>, std::move(err)) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const core::error& error() const& { return std::get<1>(v_); }
  core::error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, core::error> v_;
};

/// result<void>: success carries nothing.
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(core::error err) : err_(std::move(err)), ok_(false) {}
  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const core::error& error() const& { return err_; }
  core::error&& error() && { return std::move(err_); }

 private:
  core::error err_;
  bool ok_ = true;
};

}  // namespace weir::core
