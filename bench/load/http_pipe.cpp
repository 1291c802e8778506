// http_pipe: a keep-alive HTTP/1.1 connection with pipelined requests (publishers, SSE control
// POSTs). Both servers answer in order, so answers are matched to requests by position.
#include <boost/asio/write.hpp>

#include "load.hpp"

namespace weir::bench {

http_pipe::http_pipe(asio::io_context& ioc, tcp::endpoint ep, asio::ip::address source)
    : sock_(ioc), ep_(ep), source_(source) {}

void http_pipe::connect(std::function<void(bool)> done) {
  boost::system::error_code ec;
  sock_.open(ep_.protocol(), ec);
  if (!ec) {
    bind_source(sock_, source_, ec);
  }
  if (ec) {
    done(false);
    return;
  }
  sock_.async_connect(
      ep_, [self = shared_from_this(), done = std::move(done)](boost::system::error_code ec) {
        if (!ec) {
          self->sock_.set_option(tcp::no_delay(true), ec);
          self->read();
        }
        done(!ec);
      });
}

void http_pipe::send(std::function<std::string()> build, std::function<void(unsigned)> done) {
  if (failed_) {
    done(0);
    return;
  }
  queued_.emplace_back(std::move(build), std::move(done));
  flush();
}

void http_pipe::flush() {
  if (writing_ || queued_.empty() || failed_) {
    return;
  }
  out_.clear();
  for (auto& [build, done] : queued_) {
    out_ += build();
    waiting_.push_back(std::move(done));
  }
  queued_.clear();
  writing_ = true;
  asio::async_write(sock_, asio::buffer(out_),
                    [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->fail();
                        return;
                      }
                      self->flush();
                    });
}

void http_pipe::read() {
  sock_.async_read_some(
      asio::buffer(buf_), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
        if (ec) {
          self->fail();
          return;
        }
        self->in_.append(self->buf_.data(), n);
        for (;;) {
          if (!self->in_body_) {
            auto h = parse_http_head(self->in_);
            if (!h) {
              break;
            }
            self->in_.erase(0, h->size);
            self->status_ = h->status;
            self->in_body_ = true;
            self->chunks_ = chunked_decoder{};
            self->body_left_ = h->chunked ? SIZE_MAX : h->content_length.value_or(0);
          }
          if (self->body_left_ == SIZE_MAX) {
            self->chunk_out_.clear();
            if (!self->chunks_.feed(self->in_, self->chunk_out_)) {
              self->fail();
              return;
            }
            if (!self->chunks_.done()) {
              break;
            }
            // The last chunk's CRLF (no trailers) follows the size line.
            if (self->in_.size() < 2) {
              break;
            }
            self->in_.erase(0, 2);
          } else {
            auto take = std::min(self->body_left_, self->in_.size());
            self->in_.erase(0, take);
            self->body_left_ -= take;
            if (self->body_left_ > 0) {
              break;
            }
          }
          self->in_body_ = false;
          if (self->waiting_head_ < self->waiting_.size()) {
            auto cb = std::move(self->waiting_[self->waiting_head_++]);
            if (self->waiting_head_ == self->waiting_.size()) {
              self->waiting_.clear();
              self->waiting_head_ = 0;
            }
            cb(self->status_);
          }
        }
        self->read();
      });
}

void http_pipe::fail() {
  if (failed_) {
    return;
  }
  failed_ = true;
  boost::system::error_code ec;
  sock_.close(ec);
  auto waiting = std::move(waiting_);
  auto queued = std::move(queued_);
  for (std::size_t i = waiting_head_; i < waiting.size(); ++i) {
    waiting[i](0);
  }
  for (auto& [build, done] : queued) {
    done(0);
  }
}

}  // namespace weir::bench
