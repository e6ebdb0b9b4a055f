/*
 * riverlet.hpp: the C++ API of Riverlet, header-only C++17 over the C API (riverlet.h).
 *
 * Every C call is wrapped one to one; the wrapper adds only C++ glue:
 * - Handles (LocalServer, Connection, Table, Writer, Subscription) are move-only objects with
 *   one owner; the destructor frees the C handle and never throws. `close()` frees it now and
 *   throws what the C call reports (a Writer's close reports the write error of its last flush).
 *   A closed or moved-from object throws riverlet::Error of kind ErrorKind::Closed when used.
 * - A failed call throws riverlet::Error (derived from std::runtime_error): `kind()` is the C
 *   API's status (one per core error kind, plus NullArgument and Panic), `fluss_code()` the
 *   Fluss error code the server sent (0 when none), `what()` the C API's last error message.
 * - Arrow data uses the Arrow C Data / C Stream Interface. riverlet::Schema, riverlet::Array and
 *   riverlet::ArrayStream own an ArrowSchema / ArrowArray / ArrowArrayStream and release it in
 *   their destructor; `release()` hands the C struct over (e.g. to arrow::ImportRecordBatchReader
 *   or nanoarrow). Input arrays are passed by value (moved in, as the C API consumes them);
 *   input schemas are borrowed (`const ArrowSchema&`; a riverlet::Schema converts).
 * - An error inside a stream (ArrayStream::next / schema) throws riverlet::Error too, its kind
 *   read from the stream's "riverlet <kind>: message" text and `stream_errno()` the errno.
 *
 * Thread safety is the C API's: objects may be used from several threads at once, except that
 * one ArrayStream and one Subscription's poll are for one thread at a time.
 */
#ifndef RIVERLET_HPP
#define RIVERLET_HPP

#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "riverlet.h"

namespace riverlet {

/// The kind of a failure: the C API's RiverletStatus values (1-12 one per core error kind).
enum class ErrorKind : int32_t {
  Ok = RIVERLET_STATUS_OK,
  NotFound = RIVERLET_STATUS_NOT_FOUND,
  AlreadyExists = RIVERLET_STATUS_ALREADY_EXISTS,
  InvalidArgument = RIVERLET_STATUS_INVALID_ARGUMENT,
  Unsupported = RIVERLET_STATUS_UNSUPPORTED,
  Authentication = RIVERLET_STATUS_AUTHENTICATION,
  Network = RIVERLET_STATUS_NETWORK,
  Timeout = RIVERLET_STATUS_TIMEOUT,
  Server = RIVERLET_STATUS_SERVER,
  Corrupt = RIVERLET_STATUS_CORRUPT,
  Closed = RIVERLET_STATUS_CLOSED,
  Io = RIVERLET_STATUS_IO,
  Internal = RIVERLET_STATUS_INTERNAL,
  NullArgument = RIVERLET_STATUS_NULL_ARGUMENT,
  Panic = RIVERLET_STATUS_PANIC,
};

/// The stable upper-case name of a kind ("NOT_FOUND", ...); "UNKNOWN" for another value.
inline const char *kind_name(ErrorKind kind) noexcept {
  return riverlet_status_name(static_cast<int32_t>(kind));
}

/// Fluss's name of the error code `code` (e.g. 12 is "NOT_LEADER_OR_FOLLOWER"); "UNKNOWN_CODE"
/// for a code Fluss does not define.
inline const char *fluss_code_name(int32_t code) noexcept { return riverlet_fluss_code_name(code); }

/// The version of the Riverlet C library ("0.1.0").
inline const char *version() noexcept { return riverlet_version(); }

/// The number of live C handles of every kind (0 when everything created was freed); for leak
/// checks in tests.
inline size_t live_handles() noexcept { return riverlet_live_handles(); }

/// A failed Riverlet call: the C API's error kind, the Fluss error code and the message.
class Error : public std::runtime_error {
 public:
  /// An error of `kind` with `message`; `fluss_code` 0 when the server sent none, `stream_errno`
  /// the errno of a failed stream call (0 otherwise).
  Error(ErrorKind kind, std::string message, int32_t fluss_code = 0, int stream_errno = 0)
      : std::runtime_error(std::move(message)),
        kind_(kind),
        fluss_code_(fluss_code),
        stream_errno_(stream_errno) {}

  /// The kind of the failure (the C API's RiverletStatus).
  ErrorKind kind() const noexcept { return kind_; }
  /// The C API's status number of the kind (1-12, 100 NULL_ARGUMENT, 101 PANIC).
  int32_t status() const noexcept { return static_cast<int32_t>(kind_); }
  /// The kind's upper-case name ("NOT_FOUND", ...).
  const char *kind_name() const noexcept { return riverlet::kind_name(kind_); }
  /// The Fluss error code the server sent with the failure, 0 when there was none.
  int32_t fluss_code() const noexcept { return fluss_code_; }
  /// Fluss's name of fluss_code() ("NONE"-like names come from Fluss; "UNKNOWN_CODE" if unknown).
  const char *fluss_code_name() const noexcept { return riverlet::fluss_code_name(fluss_code_); }
  /// The errno a stream's get_schema / get_next returned (EIO, EINVAL, ENOSYS), 0 for a call.
  int stream_errno() const noexcept { return stream_errno_; }
  /// True for the kinds that may go away when retried (Network, Timeout).
  bool retriable() const noexcept {
    return kind_ == ErrorKind::Network || kind_ == ErrorKind::Timeout;
  }

 private:
  ErrorKind kind_;
  int32_t fluss_code_;
  int stream_errno_;
};

namespace detail {

/// Throws the calling thread's last error when `status` is not OK.
inline void check(RiverletStatus status) {
  if (status == RIVERLET_STATUS_OK) return;
  const char *m = riverlet_last_error_message();
  int32_t code = riverlet_last_error_fluss_code();
  throw Error(static_cast<ErrorKind>(status),
              m != nullptr ? std::string(m) : std::string(riverlet_status_name(status)), code);
}

[[noreturn]] inline void throw_closed(const char *what) {
  throw Error(ErrorKind::Closed, std::string("riverlet::") + what + " is closed or was moved from");
}

/// The kind named by a stream error text "riverlet <kind>: message" (Internal when unnamed).
inline ErrorKind stream_error_kind(const char *text) {
  static const int32_t kinds[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 100, 101};
  const char *prefix = "riverlet ";
  if (text == nullptr) return ErrorKind::Internal;
  const char *at = std::strstr(text, prefix);
  if (at == nullptr) return ErrorKind::Internal;
  at += std::strlen(prefix);
  const char *colon = std::strchr(at, ':');
  if (colon == nullptr) return ErrorKind::Internal;
  std::string word(at, static_cast<size_t>(colon - at));
  for (int32_t k : kinds) {
    std::string name = riverlet_status_name(k);
    for (char &c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (name == word) return static_cast<ErrorKind>(k);
  }
  return ErrorKind::Internal;
}

inline std::vector<const char *> c_strs(const std::vector<std::string> &v) {
  std::vector<const char *> out;
  out.reserve(v.size());
  for (const auto &s : v) out.push_back(s.c_str());
  return out;
}

inline const char *c_str_or_null(const std::optional<std::string> &s) noexcept {
  return s ? s->c_str() : nullptr;
}

/// Keys and values of a list of pairs as parallel C string arrays.
struct CPairs {
  std::vector<const char *> keys, values;
  explicit CPairs(const std::vector<std::pair<std::string, std::string>> &pairs) {
    keys.reserve(pairs.size());
    values.reserve(pairs.size());
    for (const auto &p : pairs) {
      keys.push_back(p.first.c_str());
      values.push_back(p.second.c_str());
    }
  }
  size_t size() const noexcept { return keys.size(); }
};

/// A C handle with one owner, freed by `Free` (errors ignored) in the destructor.
template <typename T, RiverletStatus (*Free)(T *)>
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(T *raw) noexcept : raw_(raw) {}
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  Handle(Handle &&other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  Handle &operator=(Handle &&other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  ~Handle() { reset(); }

  T *get() const noexcept { return raw_; }
  T *release() noexcept { return std::exchange(raw_, nullptr); }
  /// Frees the handle, ignoring the status (for destructors).
  void reset() noexcept {
    if (raw_ != nullptr) (void)Free(std::exchange(raw_, nullptr));
  }
  /// Frees the handle and throws what the free reports; nothing when already empty.
  void close() {
    if (raw_ != nullptr) check(Free(std::exchange(raw_, nullptr)));
  }

 private:
  T *raw_ = nullptr;
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Arrow C Data / C Stream Interface owners
// ---------------------------------------------------------------------------------------------

/// An owned ArrowSchema, released in the destructor (move-only).
class Schema {
 public:
  /// An empty (released) schema.
  Schema() noexcept { std::memset(&raw_, 0, sizeof raw_); }
  /// Takes over `*raw` (which is left released, its `release` NULL).
  explicit Schema(struct ArrowSchema *raw) noexcept : Schema() {
    if (raw != nullptr) {
      raw_ = *raw;
      raw->release = nullptr;
    }
  }
  Schema(const Schema &) = delete;
  Schema &operator=(const Schema &) = delete;
  Schema(Schema &&other) noexcept : Schema(&other.raw_) {}
  Schema &operator=(Schema &&other) noexcept {
    if (this != &other) {
      reset();
      raw_ = other.raw_;
      other.raw_.release = nullptr;
    }
    return *this;
  }
  ~Schema() { reset(); }

  /// False once released or moved from.
  bool valid() const noexcept { return raw_.release != nullptr; }
  /// The C struct (borrowed).
  const struct ArrowSchema &operator*() const noexcept { return raw_; }
  const struct ArrowSchema *operator->() const noexcept { return &raw_; }
  struct ArrowSchema *get() noexcept { return &raw_; }
  const struct ArrowSchema *get() const noexcept { return &raw_; }
  /// Borrowed as an input schema of a call.
  operator const struct ArrowSchema &() const noexcept { return raw_; }
  /// Hands the C struct over; the caller releases it.
  struct ArrowSchema release() noexcept {
    struct ArrowSchema out = raw_;
    raw_.release = nullptr;
    return out;
  }
  /// Releases the schema now.
  void reset() noexcept {
    if (raw_.release != nullptr) raw_.release(&raw_);
    raw_.release = nullptr;
  }

 private:
  struct ArrowSchema raw_;
};

/// An owned ArrowArray (one record batch as a struct array), released in the destructor.
class Array {
 public:
  /// An empty (released) array.
  Array() noexcept { std::memset(&raw_, 0, sizeof raw_); }
  /// Takes over `*raw` (which is left released, its `release` NULL).
  explicit Array(struct ArrowArray *raw) noexcept : Array() {
    if (raw != nullptr) {
      raw_ = *raw;
      raw->release = nullptr;
    }
  }
  Array(const Array &) = delete;
  Array &operator=(const Array &) = delete;
  Array(Array &&other) noexcept : Array(&other.raw_) {}
  Array &operator=(Array &&other) noexcept {
    if (this != &other) {
      reset();
      raw_ = other.raw_;
      other.raw_.release = nullptr;
    }
    return *this;
  }
  ~Array() { reset(); }

  /// False once released or moved from.
  bool valid() const noexcept { return raw_.release != nullptr; }
  /// The number of rows.
  int64_t length() const noexcept { return raw_.length; }
  const struct ArrowArray &operator*() const noexcept { return raw_; }
  const struct ArrowArray *operator->() const noexcept { return &raw_; }
  struct ArrowArray *get() noexcept { return &raw_; }
  const struct ArrowArray *get() const noexcept { return &raw_; }
  /// Hands the C struct over; the caller releases it.
  struct ArrowArray release() noexcept {
    struct ArrowArray out = raw_;
    raw_.release = nullptr;
    return out;
  }
  /// Releases the array now.
  void reset() noexcept {
    if (raw_.release != nullptr) raw_.release(&raw_);
    raw_.release = nullptr;
  }

 private:
  struct ArrowArray raw_;
};

/// An owned ArrowArrayStream of record batches, released in the destructor (move-only).
///
///   for (riverlet::Array& batch : stream) { ... }      // or: while (auto b = stream.next())
///
/// A stream error throws riverlet::Error (kind from the stream's text, stream_errno() set).
class ArrayStream {
 public:
  /// An empty (released) stream.
  ArrayStream() noexcept { std::memset(&raw_, 0, sizeof raw_); }
  /// Takes over `*raw` (which is left released, its `release` NULL).
  explicit ArrayStream(struct ArrowArrayStream *raw) noexcept : ArrayStream() {
    if (raw != nullptr) {
      raw_ = *raw;
      raw->release = nullptr;
    }
  }
  ArrayStream(const ArrayStream &) = delete;
  ArrayStream &operator=(const ArrayStream &) = delete;
  ArrayStream(ArrayStream &&other) noexcept : ArrayStream(&other.raw_) {}
  ArrayStream &operator=(ArrayStream &&other) noexcept {
    if (this != &other) {
      reset();
      raw_ = other.raw_;
      other.raw_.release = nullptr;
    }
    return *this;
  }
  ~ArrayStream() { reset(); }

  /// False once released, handed over or moved from.
  bool valid() const noexcept { return raw_.release != nullptr; }

  /// The schema of the stream's batches (a struct, one child per column).
  Schema schema() {
    struct ArrowSchema out;
    std::memset(&out, 0, sizeof out);
    require();
    int rc = raw_.get_schema(&raw_, &out);
    if (rc != 0) throw stream_error(rc);
    return Schema(&out);
  }

  /// The next batch, or std::nullopt at the end of the stream.
  std::optional<Array> next() {
    struct ArrowArray out;
    std::memset(&out, 0, sizeof out);
    require();
    int rc = raw_.get_next(&raw_, &out);
    if (rc != 0) throw stream_error(rc);
    if (out.release == nullptr) return std::nullopt;
    return Array(&out);
  }

  /// Reads the stream to its end and returns the number of rows (the stream stays valid, empty).
  int64_t count_rows() {
    int64_t rows = 0;
    while (auto batch = next()) rows += batch->length();
    return rows;
  }

  /// The stream's last error text (NULL when none).
  const char *last_error() noexcept {
    if (raw_.release == nullptr || raw_.get_last_error == nullptr) return nullptr;
    return raw_.get_last_error(&raw_);
  }

  /// The C struct, e.g. for arrow::ImportRecordBatchReader(stream.get()), which takes it over.
  struct ArrowArrayStream *get() noexcept { return &raw_; }
  /// Hands the C struct over; the caller releases it.
  struct ArrowArrayStream release() noexcept {
    struct ArrowArrayStream out = raw_;
    raw_.release = nullptr;
    return out;
  }
  /// Releases the stream now.
  void reset() noexcept {
    if (raw_.release != nullptr) raw_.release(&raw_);
    raw_.release = nullptr;
  }

  /// An input iterator over the batches (move-only; for range-for).
  class iterator {
   public:
    iterator() noexcept = default;
    explicit iterator(ArrayStream *s) : stream_(s) { ++*this; }
    Array &operator*() noexcept { return *current_; }
    Array *operator->() noexcept { return &*current_; }
    iterator &operator++() {
      current_ = stream_->next();
      if (!current_) stream_ = nullptr;
      return *this;
    }
    bool operator==(const iterator &o) const noexcept { return stream_ == o.stream_; }
    bool operator!=(const iterator &o) const noexcept { return stream_ != o.stream_; }

   private:
    ArrayStream *stream_ = nullptr;
    std::optional<Array> current_;
  };
  /// Starts reading (the first batch is read here).
  iterator begin() { return iterator(this); }
  iterator end() noexcept { return iterator(); }

 private:
  void require() const {
    if (raw_.release == nullptr) detail::throw_closed("ArrayStream");
  }
  Error stream_error(int rc) {
    const char *text = last_error();
    std::string message = text != nullptr ? text : "stream error (no message)";
    return Error(detail::stream_error_kind(text), message, 0, rc);
  }

  struct ArrowArrayStream raw_;
};

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/// Option names with their values (client options, server options, table properties).
using Options = std::vector<std::pair<std::string, std::string>>;

/// How a table is created (RiverletTableOptions); every field may stay empty: a log table with
/// the server's defaults.
struct TableOptions {
  /// Primary key columns (none: a log table).
  std::vector<std::string> primary_key;
  /// Partition columns (none: not partitioned).
  std::vector<std::string> partition_keys;
  /// Bucket key columns (none: the primary key minus the partition columns, or none).
  std::vector<std::string> bucket_keys;
  /// Number of buckets; 0 or less: the server's default.
  int32_t bucket_count = 0;
  /// Table properties, e.g. {"table.log.ttl", "1h"}.
  Options properties;
  /// A comment.
  std::optional<std::string> comment;
  /// The auto-increment column (INT or BIGINT, not in the primary key).
  std::optional<std::string> auto_increment_column;
};

/// Options of a read (RiverletReadOptions); the defaults read every row and column.
struct ReadOptions {
  /// Columns to read, in this order (projection); empty: all columns.
  std::vector<std::string> columns;
  /// A filter in Riverlet's filter text, e.g. "score >= 20 AND name LIKE 'a%'".
  std::optional<std::string> filter;
  /// Partitions to read by Fluss partition name ("2024-01-01$eu"); empty: all.
  std::vector<std::string> partitions;
  /// At most this many rows; 0 or less: no limit.
  int64_t limit = 0;
  /// Time zone of timestamp texts of time-range reads ("Asia/Shanghai", "UTC", "+08:00",
  /// "local"); none: the process's local zone.
  std::optional<std::string> time_zone;
  /// Buckets to read in every partition read; empty: all.
  std::vector<int32_t> buckets;
  /// The changelog form (`_change_type`, `_log_offset`, `_commit_timestamp` first).
  bool changelog = false;
  /// Read-optimized read of a primary-key table (each bucket's latest KV snapshot only).
  bool read_optimized = false;
  /// At most this many rows per batch; 0 or less: batches as they come.
  int64_t batch_size = 0;
};

/// The next offset of one bucket: a subscription's position, or a start offset to resume from.
struct BucketOffset {
  /// The partition's name (values joined by '$'); none without partitions or to name the
  /// partition by `partition_id`.
  std::optional<std::string> partition_name;
  /// The partition's id when `partition_name` is empty; -1 for a table without partitions.
  int64_t partition_id = -1;
  /// The bucket.
  int32_t bucket = 0;
  /// The log offset of the next record to read.
  int64_t offset = 0;
};

/// Options of a subscription (RiverletSubscribeOptions); the defaults subscribe to every
/// column, partition and bucket in startup mode "full".
struct SubscribeOptions {
  /// Columns to return, in this order; empty: all.
  std::vector<std::string> columns;
  /// Partitions to read by name; empty: all partitions existing when subscribing.
  std::vector<std::string> partitions;
  /// Buckets to read in every partition; empty: all.
  std::vector<int32_t> buckets;
  /// "full" (none: the default), "earliest", "latest" or "timestamp".
  std::optional<std::string> startup_mode;
  /// For mode "timestamp": epoch milliseconds as digits or "yyyy-MM-dd HH:mm:ss".
  std::optional<std::string> startup_timestamp;
  /// Time zone of `startup_timestamp` texts; none: the process's local zone.
  std::optional<std::string> time_zone;
  /// Buckets that start at an explicit offset (a restored checkpoint).
  std::vector<BucketOffset> start_offsets;
};

/// One lake snapshot of a lake-enabled table (riverlet_lake_snapshot): its id, and one row per
/// bucket with columns partition_id (int64, null without partitions), bucket (int32) and
/// log_offset (int64: the log offset the lake holds the bucket's records before; null where
/// nothing of it is tiered yet).
struct LakeSnapshot {
  int64_t snapshot_id;
  ArrayStream buckets;
};

/// The offsets riverlet_list_offsets reports.
enum class OffsetSpec : int32_t {
  /// The log start offset.
  Earliest = RIVERLET_OFFSET_EARLIEST,
  /// The high watermark (the offset the next record gets).
  Latest = RIVERLET_OFFSET_LATEST,
  /// The offset of the first batch committed at or after a timestamp.
  Timestamp = RIVERLET_OFFSET_TIMESTAMP,
};

namespace detail {

struct CTableOptions {
  std::vector<const char *> pk, parts, bucket_keys;
  CPairs props;
  RiverletTableOptions c;
  explicit CTableOptions(const TableOptions &o)
      : pk(c_strs(o.primary_key)),
        parts(c_strs(o.partition_keys)),
        bucket_keys(c_strs(o.bucket_keys)),
        props(o.properties) {
    std::memset(&c, 0, sizeof c);
    c.primary_key = pk.data();
    c.num_primary_key = pk.size();
    c.partition_keys = parts.data();
    c.num_partition_keys = parts.size();
    c.bucket_keys = bucket_keys.data();
    c.num_bucket_keys = bucket_keys.size();
    c.bucket_count = o.bucket_count;
    c.property_keys = props.keys.data();
    c.property_values = props.values.data();
    c.num_properties = props.size();
    c.comment = c_str_or_null(o.comment);
    c.auto_increment_column = c_str_or_null(o.auto_increment_column);
  }
};

struct CReadOptions {
  std::vector<const char *> columns, partitions;
  RiverletReadOptions c;
  explicit CReadOptions(const ReadOptions &o)
      : columns(c_strs(o.columns)), partitions(c_strs(o.partitions)) {
    std::memset(&c, 0, sizeof c);
    c.columns = columns.data();
    c.num_columns = columns.size();
    c.filter = c_str_or_null(o.filter);
    c.partitions = partitions.data();
    c.num_partitions = partitions.size();
    c.limit = o.limit;
    c.time_zone = c_str_or_null(o.time_zone);
    c.buckets = o.buckets.data();
    c.num_buckets = o.buckets.size();
    c.changelog = o.changelog;
    c.read_optimized = o.read_optimized;
    c.batch_size = o.batch_size;
  }
};

struct CSubscribeOptions {
  std::vector<const char *> columns, partitions;
  std::vector<RiverletBucketOffset> offsets;
  RiverletSubscribeOptions c;
  explicit CSubscribeOptions(const SubscribeOptions &o)
      : columns(c_strs(o.columns)), partitions(c_strs(o.partitions)) {
    for (const auto &b : o.start_offsets) {
      RiverletBucketOffset r;
      r.partition_name = c_str_or_null(b.partition_name);
      r.partition_id = b.partition_id;
      r.bucket = b.bucket;
      r.offset = b.offset;
      offsets.push_back(r);
    }
    std::memset(&c, 0, sizeof c);
    c.columns = columns.data();
    c.num_columns = columns.size();
    c.partitions = partitions.data();
    c.num_partitions = partitions.size();
    c.buckets = o.buckets.data();
    c.num_buckets = o.buckets.size();
    c.startup_mode = c_str_or_null(o.startup_mode);
    c.startup_timestamp = c_str_or_null(o.startup_timestamp);
    c.time_zone = c_str_or_null(o.time_zone);
    c.start_offsets = offsets.data();
    c.num_start_offsets = offsets.size();
  }
};

inline ArrayStream take_stream(RiverletStatus status, struct ArrowArrayStream *out) {
  check(status);
  return ArrayStream(out);
}

inline struct ArrowArrayStream empty_stream() noexcept {
  struct ArrowArrayStream s;
  std::memset(&s, 0, sizeof s);
  return s;
}

inline bool is_valid(const struct ArrowArray *a, int64_t i) noexcept {
  const uint8_t *bits = static_cast<const uint8_t *>(a->buffers[0]);
  if (a->null_count == 0 || bits == nullptr) return true;
  i += a->offset;
  return ((bits[i / 8] >> (i % 8)) & 1) != 0;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Warnings and metrics
// ---------------------------------------------------------------------------------------------

/// A warning of a call that succeeded (e.g. a time-range window before the log's retention).
struct Warning {
  /// RIVERLET_WARNING_* (1 = RIVERLET_WARNING_BEFORE_RETENTION).
  int32_t kind = 0;
  /// The warnings' text, one per line.
  std::string message;
};

/// The warnings of the last call on this thread, or std::nullopt when it had none. Ask right
/// after the call (any later riverlet call replaces them).
inline std::optional<Warning> last_warning() {
  const char *m = riverlet_last_warning_message();
  if (m == nullptr) return std::nullopt;
  return Warning{riverlet_last_warning_kind(), std::string(m)};
}

/// A function called with every warning (kind, message) on the thread of the call that warns.
/// It must not call back into Riverlet; an exception it throws is swallowed.
using WarningHandler = std::function<void(int32_t kind, const std::string &message)>;

namespace detail {
inline std::mutex &warning_mutex() {
  static std::mutex m;
  return m;
}
inline WarningHandler &warning_handler() {
  static WarningHandler h;
  return h;
}
inline void warning_trampoline(int32_t kind, const char *message, void *) {
  WarningHandler h;
  {
    std::lock_guard<std::mutex> lock(warning_mutex());
    h = warning_handler();
  }
  if (!h) return;
  try {
    h(kind, message != nullptr ? std::string(message) : std::string());
  } catch (...) {
    // an exception must not unwind into Riverlet
  }
}
}  // namespace detail

/// Registers `handler` (empty: none) for every warning, process-wide, replacing the previous
/// one (riverlet_set_warning_callback).
inline void set_warning_handler(WarningHandler handler) {
  bool any = static_cast<bool>(handler);
  {
    std::lock_guard<std::mutex> lock(detail::warning_mutex());
    detail::warning_handler() = std::move(handler);
  }
  riverlet_set_warning_callback(any ? &detail::warning_trampoline : nullptr, nullptr);
}

/// Every metric recorded in this process as a stream: columns name, labels, value (float64).
inline ArrayStream metrics() {
  struct ArrowArrayStream out = detail::empty_stream();
  return detail::take_stream(riverlet_metrics(&out), &out);
}

// ---------------------------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------------------------

/// An embedded Riverlet server running in this process (riverlet_local_server_*).
class LocalServer {
 public:
  /// An empty server object (use start()).
  LocalServer() noexcept = default;
  /// Takes over a raw handle.
  explicit LocalServer(RiverletLocalServer *raw) noexcept : h_(raw) {}

  /// Starts a server. `data_dir`: directory of the catalog and data, none for a temporary one
  /// deleted when the server is freed; `port` 0 for a free one; options: "host", "fsync",
  /// "sasl.user.<name>", and the server options by their Fluss names.
  static LocalServer start(const std::optional<std::string> &data_dir = std::nullopt,
                           uint16_t port = 0, const Options &options = {}) {
    detail::CPairs o(options);
    RiverletLocalServer *raw = nullptr;
    detail::check(riverlet_local_server_start(detail::c_str_or_null(data_dir), port,
                                              o.keys.data(), o.values.data(), o.size(), &raw));
    return LocalServer(raw);
  }

  /// The server's bootstrap address ("127.0.0.1:PORT"); Closed after stop().
  std::string bootstrap_servers() const {
    const char *out = nullptr;
    detail::check(riverlet_local_server_bootstrap_servers(raw(), &out));
    return out != nullptr ? std::string(out) : std::string();
  }
  /// Takes a KV snapshot of every changed primary-key bucket now.
  void take_kv_snapshots() const { detail::check(riverlet_local_server_take_kv_snapshots(raw())); }
  /// Commits the new rows of every lake-enabled table to the lake now.
  void commit_lake() const { detail::check(riverlet_local_server_commit_lake(raw())); }
  /// Stops the server (acknowledged data is on disk); the object stays until close / destruction.
  /// Stopping twice throws Closed.
  void stop() const { detail::check(riverlet_local_server_stop(raw())); }
  /// Stops the server if running and frees it (and its temporary data directory).
  void close() { h_.close(); }

  /// The raw C handle (still owned by this object), NULL once closed.
  RiverletLocalServer *native() const noexcept { return h_.get(); }
  /// Gives up ownership of the raw C handle.
  RiverletLocalServer *release() noexcept { return h_.release(); }
  explicit operator bool() const noexcept { return h_.get() != nullptr; }

 private:
  const RiverletLocalServer *raw() const {
    if (h_.get() == nullptr) detail::throw_closed("LocalServer");
    return h_.get();
  }
  detail::Handle<RiverletLocalServer, riverlet_local_server_free> h_;
};

/// A writer of one table: appends (log tables), or upserts and deletes (primary-key tables).
class Writer {
 public:
  Writer() noexcept = default;
  /// Takes over a raw handle.
  explicit Writer(RiverletWriter *raw) noexcept : h_(raw) {}

  /// Appends the rows of `batch` (a struct array, moved in) described by `schema` to a log
  /// table; returns once they are queued (flush() reports write errors).
  void append(Array batch, const struct ArrowSchema &schema) const {
    struct ArrowArray raw_batch = batch.release();
    detail::check(riverlet_writer_append(raw_or_release(&raw_batch), &raw_batch, &schema));
  }
  /// Upserts the rows of `batch` (moved in) into a primary-key table (a partial-update writer
  /// updates only its columns). Queued like append().
  void upsert(Array batch, const struct ArrowSchema &schema) const {
    struct ArrowArray raw_batch = batch.release();
    detail::check(riverlet_writer_upsert(raw_or_release(&raw_batch), &raw_batch, &schema));
  }
  /// Deletes the keys of the rows of `batch` (moved in; full rows or the key columns) from a
  /// primary-key table. Queued like append().
  void delete_rows(Array batch, const struct ArrowSchema &schema) const {
    struct ArrowArray raw_batch = batch.release();
    detail::check(riverlet_writer_delete(raw_or_release(&raw_batch), &raw_batch, &schema));
  }
  /// Waits until every queued write is acknowledged; throws the first write error since the
  /// previous flush.
  void flush() const { detail::check(riverlet_writer_flush(raw())); }
  /// Flushes, stops and frees the writer; throws the flush's write error (the writer is freed
  /// either way). The destructor does the same but cannot report the error: close() writers.
  void close() { h_.close(); }

  RiverletWriter *native() const noexcept { return h_.get(); }
  RiverletWriter *release() noexcept { return h_.release(); }
  explicit operator bool() const noexcept { return h_.get() != nullptr; }

 private:
  const RiverletWriter *raw() const {
    if (h_.get() == nullptr) detail::throw_closed("Writer");
    return h_.get();
  }
  // A closed writer still consumes the batch, as the C call would.
  const RiverletWriter *raw_or_release(struct ArrowArray *batch) const {
    if (h_.get() == nullptr && batch->release != nullptr) batch->release(batch);
    return raw();
  }
  detail::Handle<RiverletWriter, riverlet_writer_free> h_;
};

/// An unbounded subscription to a table's changes (riverlet_subscription_*).
class Subscription {
 public:
  Subscription() noexcept = default;
  /// Takes over a raw handle.
  explicit Subscription(RiverletSubscription *raw) noexcept : h_(raw) {}

  /// Waits up to `timeout_ms` for changes and returns what arrived (possibly no batch):
  /// `_change_type`, `_log_offset`, `_commit_timestamp`, then the subscribed columns.
  ArrayStream poll(int64_t timeout_ms) const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_subscription_poll(raw(), timeout_ms, &out), &out);
  }
  /// The position (next offset of every bucket read) as a stream: partition_id,
  /// partition_name, bucket, offset.
  ArrayStream position() const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_subscription_position(raw(), &out), &out);
  }
  /// The position as start offsets, to store in a checkpoint and pass back as
  /// SubscribeOptions::start_offsets.
  std::vector<BucketOffset> checkpoint() const {
    std::vector<BucketOffset> out;
    ArrayStream s = position();
    while (auto batch = s.next()) {
      const struct ArrowArray *a = batch->get();
      if (a->n_children < 4) throw Error(ErrorKind::Internal, "position stream lacks columns");
      const struct ArrowArray *pid = a->children[0], *pname = a->children[1],
                              *bucket = a->children[2], *offset = a->children[3];
      for (int64_t r = 0; r < a->length; r++) {
        BucketOffset b;
        if (detail::is_valid(pid, r)) {
          b.partition_id = static_cast<const int64_t *>(pid->buffers[1])[r + pid->offset];
        }
        if (detail::is_valid(pname, r)) {
          const int32_t *off = static_cast<const int32_t *>(pname->buffers[1]);
          const char *data = static_cast<const char *>(pname->buffers[2]);
          int64_t i = r + pname->offset;
          b.partition_name = std::string(data + off[i], static_cast<size_t>(off[i + 1] - off[i]));
        }
        b.bucket = static_cast<const int32_t *>(bucket->buffers[1])[r + bucket->offset];
        b.offset = static_cast<const int64_t *>(offset->buffers[1])[r + offset->offset];
        out.push_back(std::move(b));
      }
    }
    return out;
  }
  /// Stops the subscription and frees it.
  void close() { h_.close(); }

  RiverletSubscription *native() const noexcept { return h_.get(); }
  RiverletSubscription *release() noexcept { return h_.release(); }
  explicit operator bool() const noexcept { return h_.get() != nullptr; }

 private:
  const RiverletSubscription *raw() const {
    if (h_.get() == nullptr) detail::throw_closed("Subscription");
    return h_.get();
  }
  detail::Handle<RiverletSubscription, riverlet_subscription_free> h_;
};

/// An open table (riverlet_table_*): reads, lookups, writers, subscriptions.
class Table {
 public:
  Table() noexcept = default;
  /// Takes over a raw handle.
  explicit Table(RiverletTable *raw) noexcept : h_(raw) {}

  /// The table's Arrow schema (a struct, one child per column, as reads return it).
  Schema schema() const {
    struct ArrowSchema out;
    std::memset(&out, 0, sizeof out);
    detail::check(riverlet_table_schema(raw(), &out));
    return Schema(&out);
  }
  /// Whether the table has a primary key.
  bool has_primary_key() const {
    bool out = false;
    detail::check(riverlet_table_has_primary_key(raw(), &out));
    return out;
  }
  /// The leader of every bucket as a stream: partition_id, partition_name, bucket, leader_id,
  /// leader_address (leader columns null while a bucket has no live leader).
  ArrayStream bucket_leaders() const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_table_bucket_leaders(raw(), &out), &out);
  }

  /// An append writer of a log table.
  Writer new_append_writer() const {
    RiverletWriter *w = nullptr;
    detail::check(riverlet_table_new_append_writer(raw(), &w));
    return Writer(w);
  }
  /// An upsert writer of a primary-key table; with `columns` a partial update of those columns
  /// (they must include the primary key).
  Writer new_upsert_writer(const std::vector<std::string> &columns = {}) const {
    std::vector<const char *> c = detail::c_strs(columns);
    RiverletWriter *w = nullptr;
    detail::check(riverlet_table_new_upsert_writer(raw(), c.data(), c.size(), &w));
    return Writer(w);
  }

  /// Reads the table: a log table's records, a primary-key table's latest value per key. Bad
  /// options (unknown column, bad filter, unknown partition) throw here, before any data.
  ArrayStream read(const ReadOptions &options = {}) const {
    detail::CReadOptions o(options);
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_table_read(raw(), &o.c, &out), &out);
  }
  /// A time-range read of the window [start, end) of commit time (end none: the moment the read
  /// is planned). Texts: epoch ms digits, "yyyy-MM-dd HH:mm:ss[.fff]", "yyyy-MM-dd", ISO with
  /// offset; without an offset read in options.time_zone. Check last_warning() after it.
  ArrayStream read_between(const std::string &start,
                           const std::optional<std::string> &end = std::nullopt,
                           const ReadOptions &options = {}) const {
    detail::CReadOptions o(options);
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_table_read_between(raw(), &o.c, start.c_str(),
                                                           detail::c_str_or_null(end), &out),
                               &out);
  }
  /// read_between with epoch milliseconds: [start_ms, end_ms), end none: now.
  ArrayStream read_between_ms(int64_t start_ms, std::optional<int64_t> end_ms = std::nullopt,
                              const ReadOptions &options = {}) const {
    detail::CReadOptions o(options);
    struct ArrowArrayStream out = detail::empty_stream();
    const int64_t *end = end_ms ? &*end_ms : nullptr;
    return detail::take_stream(riverlet_table_read_between_ms(raw(), &o.c, start_ms, end, &out),
                               &out);
  }
  /// The number of rows read(options) would return.
  int64_t count(const ReadOptions &options = {}) const {
    detail::CReadOptions o(options);
    int64_t n = 0;
    detail::check(riverlet_table_count(raw(), &o.c, &n));
    return n;
  }
  /// Point lookups: `keys` (moved in, one row per key with the primary key columns) described
  /// by `key_schema`; the rows found (missing keys left out).
  ArrayStream lookup(Array keys, const struct ArrowSchema &key_schema) const {
    struct ArrowArray k = keys.release();
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_table_lookup(raw_or_release(&k), &k, &key_schema, &out),
                               &out);
  }
  /// Prefix lookups by the bucket-key columns: every row matching any prefix.
  ArrayStream prefix_lookup(Array prefixes, const struct ArrowSchema &prefix_schema) const {
    struct ArrowArray k = prefixes.release();
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(
        riverlet_table_prefix_lookup(raw_or_release(&k), &k, &prefix_schema, &out), &out);
  }
  /// lookup(), but a missing key is inserted first (Fluss's insert-if-not-exists lookup).
  ArrayStream lookup_or_insert(Array keys, const struct ArrowSchema &key_schema) const {
    struct ArrowArray k = keys.release();
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(
        riverlet_table_lookup_or_insert(raw_or_release(&k), &k, &key_schema, &out), &out);
  }
  /// `DELETE FROM t WHERE filter` on a primary-key table; returns the rows deleted.
  uint64_t delete_where(const std::string &filter) const {
    uint64_t n = 0;
    detail::check(riverlet_table_delete_where(raw(), filter.c_str(), &n));
    return n;
  }
  /// `UPDATE t SET assignments WHERE filter` on a primary-key table; returns the rows updated.
  uint64_t update_where(const std::string &filter, const std::string &assignments) const {
    uint64_t n = 0;
    detail::check(riverlet_table_update_where(raw(), filter.c_str(), assignments.c_str(), &n));
    return n;
  }
  /// Subscribes to the table's changes; the startup positions are taken now.
  Subscription subscribe(const SubscribeOptions &options = {}) const {
    detail::CSubscribeOptions o(options);
    RiverletSubscription *s = nullptr;
    detail::check(riverlet_table_subscribe(raw(), &o.c, &s));
    return Subscription(s);
  }
  /// Frees the table handle now (writers opened from it stay usable).
  void close() { h_.close(); }

  RiverletTable *native() const noexcept { return h_.get(); }
  RiverletTable *release() noexcept { return h_.release(); }
  explicit operator bool() const noexcept { return h_.get() != nullptr; }

 private:
  const RiverletTable *raw() const {
    if (h_.get() == nullptr) detail::throw_closed("Table");
    return h_.get();
  }
  const RiverletTable *raw_or_release(struct ArrowArray *batch) const {
    if (h_.get() == nullptr && batch->release != nullptr) batch->release(batch);
    return raw();
  }
  detail::Handle<RiverletTable, riverlet_table_free> h_;
};

/// A connection to a Fluss cluster or a Riverlet server, with the admin calls
/// (riverlet_connect and the calls on a RiverletConnection).
class Connection {
 public:
  Connection() noexcept = default;
  /// Takes over a raw handle.
  explicit Connection(RiverletConnection *raw) noexcept : h_(raw) {}

  /// Connects to `bootstrap_servers` ("host:port[,host:port...]") with Fluss client options
  /// (e.g. {"client.request-timeout", "30 s"}, SASL: client.security.*).
  static Connection connect(const std::string &bootstrap_servers, const Options &options = {}) {
    detail::CPairs o(options);
    RiverletConnection *raw = nullptr;
    detail::check(riverlet_connect(bootstrap_servers.c_str(), o.keys.data(), o.values.data(),
                                   o.size(), &raw));
    return Connection(raw);
  }

  /// Creates a database; AlreadyExists unless `ignore_if_exists`.
  void create_database(const std::string &database, bool ignore_if_exists = false) const {
    detail::check(riverlet_create_database(raw(), database.c_str(), ignore_if_exists));
  }
  /// Drops a database (with its tables when `cascade`); NotFound unless `ignore_if_not_exists`.
  void drop_database(const std::string &database, bool ignore_if_not_exists = false,
                     bool cascade = false) const {
    detail::check(
        riverlet_drop_database(raw(), database.c_str(), ignore_if_not_exists, cascade));
  }
  /// Whether the database exists.
  bool database_exists(const std::string &database) const {
    bool out = false;
    detail::check(riverlet_database_exists(raw(), database.c_str(), &out));
    return out;
  }
  /// The database names (one utf8 column "database_name").
  ArrayStream list_databases() const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_list_databases(raw(), &out), &out);
  }
  /// The table names of `database` (one utf8 column "table_name").
  ArrayStream list_tables(const std::string &database) const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_list_tables(raw(), database.c_str(), &out), &out);
  }
  /// Allows `principal` ("User:alice") `operation` ("READ", "WRITE", "CREATE", "DROP",
  /// "ALTER", "DESCRIBE", "ALL") on `resource` ("cluster", "cluster.db", "cluster.db.table")
  /// from `host` (empty: every host). A refusal by the server's authorizer is an Error of kind
  /// Authentication with fluss_code() 48 (AUTHORIZATION_EXCEPTION).
  void create_acl(const std::string &resource, const std::string &principal,
                  const std::string &operation, const std::string &host = "") const {
    detail::check(riverlet_create_acl(raw(), resource.c_str(), principal.c_str(),
                                      operation.c_str(), host.c_str()));
  }
  /// The ACLs matching the filter (each part empty or "ANY": everything); utf8 columns
  /// resource, principal, operation, host, permission.
  ArrayStream list_acls(const std::string &resource = "", const std::string &principal = "",
                        const std::string &operation = "", const std::string &host = "",
                        const std::string &permission = "") const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_list_acls(raw(), resource.c_str(), principal.c_str(),
                                                  operation.c_str(), host.c_str(),
                                                  permission.c_str(), &out),
                               &out);
  }
  /// Removes the ACLs matching the filter (as list_acls) and returns them (same columns).
  ArrayStream drop_acls(const std::string &resource = "", const std::string &principal = "",
                        const std::string &operation = "", const std::string &host = "",
                        const std::string &permission = "") const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(riverlet_drop_acls(raw(), resource.c_str(), principal.c_str(),
                                                  operation.c_str(), host.c_str(),
                                                  permission.c_str(), &out),
                               &out);
  }
  /// Creates `database`.`table` with the columns of `schema` (a struct "+s"; borrowed).
  void create_table(const std::string &database, const std::string &table,
                    const struct ArrowSchema &schema, const TableOptions &options = {},
                    bool ignore_if_exists = false) const {
    detail::CTableOptions o(options);
    detail::check(riverlet_create_table(raw(), database.c_str(), table.c_str(), &schema, &o.c,
                                        ignore_if_exists));
  }
  /// Drops `database`.`table`; NotFound unless `ignore_if_not_exists`.
  void drop_table(const std::string &database, const std::string &table,
                  bool ignore_if_not_exists = false) const {
    detail::check(
        riverlet_drop_table(raw(), database.c_str(), table.c_str(), ignore_if_not_exists));
  }
  /// ALTER TABLE ... ADD COLUMN: appends the (nullable, new) fields of `columns` at the end.
  void add_columns(const std::string &database, const std::string &table,
                   const struct ArrowSchema &columns) const {
    detail::check(riverlet_add_columns(raw(), database.c_str(), table.c_str(), &columns));
  }
  /// Whether `database`.`table` exists.
  bool table_exists(const std::string &database, const std::string &table) const {
    bool out = false;
    detail::check(riverlet_table_exists(raw(), database.c_str(), table.c_str(), &out));
    return out;
  }
  /// The partitions of a table: partition_id, partition_name, partition_spec.
  ArrayStream list_partitions(const std::string &database, const std::string &table) const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(
        riverlet_list_partitions(raw(), database.c_str(), table.c_str(), &out), &out);
  }
  /// Creates the partition `spec` (one key = value per partition key).
  void create_partition(const std::string &database, const std::string &table,
                        const Options &spec, bool ignore_if_exists = false) const {
    detail::CPairs s(spec);
    detail::check(riverlet_create_partition(raw(), database.c_str(), table.c_str(),
                                            s.keys.data(), s.values.data(), s.size(),
                                            ignore_if_exists));
  }
  /// Drops the partition `spec` with its data.
  void drop_partition(const std::string &database, const std::string &table, const Options &spec,
                      bool ignore_if_not_exists = false) const {
    detail::CPairs s(spec);
    detail::check(riverlet_drop_partition(raw(), database.c_str(), table.c_str(), s.keys.data(),
                                          s.values.data(), s.size(), ignore_if_not_exists));
  }
  /// The offsets (columns bucket, offset) of the buckets `buckets` (empty: all) of the
  /// partition `partition` (none without partitions), per `spec` (`timestamp_ms` for
  /// OffsetSpec::Timestamp).
  ArrayStream list_offsets(const std::string &database, const std::string &table,
                           const std::optional<std::string> &partition,
                           const std::vector<int32_t> &buckets, OffsetSpec spec,
                           int64_t timestamp_ms = 0) const {
    struct ArrowArrayStream out = detail::empty_stream();
    return detail::take_stream(
        riverlet_list_offsets(raw(), database.c_str(), table.c_str(),
                              detail::c_str_or_null(partition), buckets.data(), buckets.size(),
                              static_cast<int32_t>(spec), timestamp_ms, &out),
        &out);
  }
  /// How far the lake of lake-enabled `database`.`table` holds its log (riverlet_lake_snapshot):
  /// the latest lake snapshot, the one with `snapshot_id`, or with `readable` the one union
  /// reads take; std::nullopt when the lake has no such snapshot yet.
  std::optional<LakeSnapshot> lake_snapshot(const std::string &database, const std::string &table,
                                            std::optional<int64_t> snapshot_id = std::nullopt,
                                            bool readable = false) const {
    struct ArrowArrayStream out = detail::empty_stream();
    bool found = false;
    int64_t id = -1;
    ArrayStream buckets = detail::take_stream(
        riverlet_lake_snapshot(raw(), database.c_str(), table.c_str(),
                               snapshot_id ? &*snapshot_id : nullptr, readable, &found, &id, &out),
        &out);
    if (!found) return std::nullopt;
    return LakeSnapshot{id, std::move(buckets)};
  }
  /// Opens `database`.`table` (also "t$lake" and "t$lake$snapshots" of a lake-enabled table).
  Table get_table(const std::string &database, const std::string &table) const {
    RiverletTable *t = nullptr;
    detail::check(riverlet_connection_get_table(raw(), database.c_str(), table.c_str(), &t));
    return Table(t);
  }
  /// Closes the connection now; its tables and writers then throw Closed.
  void close() { h_.close(); }

  RiverletConnection *native() const noexcept { return h_.get(); }
  RiverletConnection *release() noexcept { return h_.release(); }
  explicit operator bool() const noexcept { return h_.get() != nullptr; }

 private:
  const RiverletConnection *raw() const {
    if (h_.get() == nullptr) detail::throw_closed("Connection");
    return h_.get();
  }
  detail::Handle<RiverletConnection, riverlet_connection_free> h_;
};

}  // namespace riverlet

#endif  // RIVERLET_HPP
