// weir::core json diff — an RFC 6902 patch that turns one document into another: members
// added, removed and recursed into; arrays of objects with unique ids matched by id (moves and
// in-place changes) rather than by position, whichever gives the smaller patch; and never a
// patch larger than replacing the whole document. The search is bounded by work proportional to
// the documents' size; a pair of documents that would take longer gets the whole-document patch.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

namespace weir::core {

/// A patch p such that apply_patch(a, p) gives a document json_equal to b.
boost::json::array json_diff(const boost::json::value& a, const boost::json::value& b);

}  // namespace weir::core
