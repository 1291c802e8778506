// The embedded store (see rocksdb_store.hpp): a writer thread drains the bounded queue and
// commits everything it took in one WriteBatch with sync=true (group commit), so the fsync cost
// is shared by every write that arrived while the previous one was in flight.
#include "store/rocksdb_store.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "store/group_commit_queue.hpp"

namespace weir::store {
namespace {

constexpr char sep = '\0';

/// `kind`, then the unit's space and object: the key of its sequence (`s`), of its deleted
/// marker (`x`, present only while its object is deleted), and with a trailing separator the
/// prefix of its records (`d`).
std::string unit_text(char kind, const unit_key& u) {
  std::string k;
  k.reserve(u.space.size() + u.object.size() + 3);
  k.push_back(kind);
  k.append(u.space);
  k.push_back(sep);
  k.append(u.object);
  return k;
}

std::string unit_prefix(const unit_key& u) {
  auto k = unit_text('d', u);
  k.push_back(sep);
  return k;
}

std::string record_key(const unit_key& u, std::string_view dataset, std::string_view id) {
  auto k = unit_prefix(u);
  k.append(dataset);
  k.push_back(sep);
  k.append(id);
  return k;
}

/// The prefix of a unit's idempotency keys (`i`); each key's value is
/// "<versionId>\n<fingerprint>\n<expires at, ms>".
std::string keys_prefix(const unit_key& u) {
  auto k = unit_text('i', u);
  k.push_back(sep);
  return k;
}

std::string seq_key(const unit_key& u) {
  return unit_text('s', u);
}

std::string deleted_key(const unit_key& u) {
  return unit_text('x', u);
}

std::string encode_seq(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i) {
    s[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return s;
}

std::uint64_t decode_seq(const std::string& s) {
  std::uint64_t v = 0;
  for (unsigned char c : s) {
    v = (v << 8) | c;
  }
  return v;
}

}  // namespace

struct rocksdb_store::impl {
  options opts;
  std::unique_ptr<rocksdb::DB> db;
  std::unique_ptr<group_commit_queue> writer;

  /// The group as one WriteBatch with sync=true: one fsync for all of it.
  core::result<void> commit(const std::vector<group_commit_queue::pending>& group) {
    rocksdb::WriteBatch wb;
    for (const auto& p : group) {
      for (const auto& w : p.batch.writes) {
        if (p.batch.captured) {
          break;  // already in the store (write_batch::captured)
        }
        auto key = record_key(p.batch.unit, w.dataset, w.id);
        if (w.json.empty()) {
          wb.Delete(key);
        } else {
          wb.Put(key, w.json);
        }
      }
      wb.Put(seq_key(p.batch.unit), encode_seq(p.batch.seq));
      for (const auto& k : p.batch.forget_keys) {
        wb.Delete(keys_prefix(p.batch.unit) + k);
      }
      for (const auto& k : p.batch.keys) {
        wb.Put(keys_prefix(p.batch.unit) + k.key, k.version_id + "\n" +
                                                      std::to_string(k.fingerprint) + "\n" +
                                                      std::to_string(k.expires_at_ms));
      }
      if (p.batch.deleted) {
        if (*p.batch.deleted) {
          wb.Put(deleted_key(p.batch.unit), "1");
        } else {
          wb.Delete(deleted_key(p.batch.unit));
        }
      }
    }
    rocksdb::WriteOptions wo;
    wo.sync = opts.sync;
    auto st = db->Write(wo, &wb);
    if (!st.ok()) {
      return core::make_error(
          "store.write_failed",
          "the embedded store could not make the write durable: " + st.ToString());
    }
    return {};
  }
};

rocksdb_store::rocksdb_store(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

rocksdb_store::~rocksdb_store() {
  stop();
  // Reads stay possible between stop() and destruction (a unit loaded during shutdown), so the
  // handle closes only here.
  impl_->db.reset();
}

core::result<std::unique_ptr<rocksdb_store>> rocksdb_store::open(options opts) {
  rocksdb::Options ro;
  ro.create_if_missing = true;
  ro.IncreaseParallelism(2);
  ro.max_open_files = 256;
  ro.keep_log_file_num = 4;
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::Open(ro, opts.dir, &raw);
  if (!st.ok()) {
    return core::make_error("store.open_failed",
                            "cannot open the data directory '" + opts.dir + "': " + st.ToString());
  }
  auto p = std::make_unique<impl>();
  p->opts = std::move(opts);
  p->db.reset(raw);
  auto* ip = p.get();
  p->writer = std::make_unique<group_commit_queue>(
      ip->opts.queue_capacity, [ip](const auto& group) { return ip->commit(group); });
  return std::unique_ptr<rocksdb_store>(new rocksdb_store(std::move(p)));
}

core::result<void> rocksdb_store::read_after_writes(const unit_key& unit,
                                                    const std::string& dataset,
                                                    std::vector<std::string> ids,
                                                    read_callback done) {
  auto rows = std::make_shared<core::result<std::vector<read_record>>>(std::vector<read_record>{});
  auto* db = impl_->db.get();
  auto read = [db, unit, dataset, ids = std::move(ids), rows] {
    std::vector<read_record> out;
    out.reserve(ids.size());
    std::string v;
    for (const auto& id : ids) {
      auto st = db->Get(rocksdb::ReadOptions{}, record_key(unit, dataset, id), &v);
      if (st.ok()) {
        out.push_back({id, std::move(v)});
      } else if (st.IsNotFound()) {
        out.push_back({id, std::nullopt});
      } else {
        *rows = core::make_error("store.read_failed", "cannot read a record: " + st.ToString());
        return;
      }
    }
    *rows = std::move(out);
  };
  return impl_->writer->submit_read(
      std::move(read), [rows, done = std::move(done)](core::result<void> r) {
        done(r ? std::move(*rows) : core::result<std::vector<read_record>>{r.error()});
      });
}

core::result<unit_snapshot> rocksdb_store::load_unit(const unit_key& unit,
                                                     const record_visitor& visit) {
  unit_snapshot snap;
  std::string v;
  auto st = impl_->db->Get(rocksdb::ReadOptions{}, seq_key(unit), &v);
  if (st.ok()) {
    snap.seq = decode_seq(v);
  } else if (!st.IsNotFound()) {
    return core::make_error("store.read_failed", "cannot read unit sequence: " + st.ToString());
  }
  st = impl_->db->Get(rocksdb::ReadOptions{}, deleted_key(unit), &v);
  if (st.ok()) {
    snap.deleted = true;
  } else if (!st.IsNotFound()) {
    return core::make_error("store.read_failed", "cannot read unit state: " + st.ToString());
  }
  auto prefix = unit_prefix(unit);
  rocksdb::ReadOptions ro;
  // A whole unit is read once, front to back: read ahead, and keep it out of the block cache
  // (the shard holds the records from here on).
  ro.readahead_size = 2 << 20;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it{impl_->db->NewIterator(ro)};
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto rest = it->key();
    rest.remove_prefix(prefix.size());
    auto s = rest.ToStringView();
    auto pos = s.find(sep);
    if (pos == std::string_view::npos) {
      continue;
    }
    visit(s.substr(0, pos), s.substr(pos + 1), it->value().ToString());
  }
  if (!it->status().ok()) {
    return core::make_error("store.read_failed", "cannot read unit: " + it->status().ToString());
  }
  // Its idempotency keys; expired ones are dropped here (nothing else reads them).
  auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  auto kp = keys_prefix(unit);
  std::unique_ptr<rocksdb::Iterator> ki{impl_->db->NewIterator(rocksdb::ReadOptions{})};
  rocksdb::WriteBatch expired;
  for (ki->Seek(kp); ki->Valid() && ki->key().starts_with(kp); ki->Next()) {
    auto v = ki->value().ToStringView();
    auto a = v.find('\n'), b = a == std::string_view::npos ? a : v.find('\n', a + 1);
    if (b == std::string_view::npos) {
      continue;
    }
    core::idempotency_entry e;
    e.key = ki->key().ToString().substr(kp.size());
    e.version_id = std::string{v.substr(0, a)};
    e.fingerprint = std::strtoull(std::string{v.substr(a + 1, b - a - 1)}.c_str(), nullptr, 10);
    e.expires_at_ms = std::strtoll(std::string{v.substr(b + 1)}.c_str(), nullptr, 10);
    if (e.expires_at_ms <= now_ms) {
      expired.Delete(ki->key());
    } else {
      snap.keys.push_back(std::move(e));
    }
  }
  if (expired.Count() > 0) {
    impl_->db->Write(rocksdb::WriteOptions{}, &expired);
  }
  return snap;
}

bool rocksdb_store::has_space(const std::string& space) const {
  std::string prefix = "s" + space;
  prefix.push_back(sep);
  std::unique_ptr<rocksdb::Iterator> it{impl_->db->NewIterator(rocksdb::ReadOptions{})};
  it->Seek(prefix);
  return it->Valid() && it->key().starts_with(prefix);
}

std::vector<std::string> rocksdb_store::objects_with_dataset(const std::string& space,
                                                             const std::string& dataset) const {
  std::vector<std::string> out;
  std::string prefix = "s" + space;
  prefix.push_back(sep);
  std::unique_ptr<rocksdb::Iterator> units{impl_->db->NewIterator(rocksdb::ReadOptions{})};
  std::unique_ptr<rocksdb::Iterator> data{impl_->db->NewIterator(rocksdb::ReadOptions{})};
  for (units->Seek(prefix); units->Valid() && units->key().starts_with(prefix); units->Next()) {
    auto object = units->key().ToString().substr(prefix.size());
    if (object.empty()) {
      continue;  // the space's objects unit holds property documents, not datasets
    }
    auto records = unit_prefix({space, object});
    records.append(dataset);
    records.push_back(sep);
    data->Seek(records);
    if (data->Valid() && data->key().starts_with(records)) {
      out.push_back(std::move(object));
    }
  }
  return out;
}

core::result<void> rocksdb_store::submit(write_batch batch, commit_callback done) {
  return impl_->writer->submit(std::move(batch), std::move(done));
}

std::size_t rocksdb_store::queued() const {
  return impl_->writer->queued();
}

const core::count_histogram* rocksdb_store::group_sizes() const {
  return &impl_->writer->group_sizes();
}

void rocksdb_store::stop() {
  if (!impl_) {
    return;
  }
  impl_->writer->stop();
  if (impl_->db) {
    impl_->db->FlushWAL(true);
  }
}

}  // namespace weir::store
