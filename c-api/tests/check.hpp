/*
 * check.hpp: the checks and Arrow helpers of the C++ test programs (test_capi.cpp,
 * test_parity.cpp, test_bad_input.cpp), the C++ counterpart of check.h. Each program counts its
 * checks in `passed` and `failed`; a failed check prints its file, line and what failed (for a
 * call: the riverlet::Error kind and message) and the program goes on.
 */
#ifndef RIVERLET_CPP_TESTS_CHECK_HPP
#define RIVERLET_CPP_TESTS_CHECK_HPP

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrow_util.h"
#include "riverlet.hpp"

static int passed = 0;
static int failed = 0;
/* The message of the last riverlet::Error a check caught (empty when none). */
static std::string last_msg;

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (cond) {                                                                 \
      passed++;                                                                 \
    } else {                                                                    \
      failed++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                           \
  } while (0)

/* Runs f; true when it returned, false (and a failure) when it threw. */
template <typename F>
static bool ok_at(F &&f, const char *file, int line, const char *expr) {
  try {
    f();
    passed++;
    last_msg.clear();
    return true;
  } catch (const riverlet::Error &e) {
    failed++;
    last_msg = e.what();
    fprintf(stderr, "%s:%d: %s threw %s: %s\n", file, line, expr, e.kind_name(), e.what());
  } catch (const std::exception &e) {
    failed++;
    fprintf(stderr, "%s:%d: %s threw a non-riverlet exception: %s\n", file, line, expr, e.what());
  }
  return false;
}

/* Runs f; true when it threw riverlet::Error of kind `want` (its message kept in last_msg). */
template <typename F>
static bool throws_at(F &&f, riverlet::ErrorKind want, const char *file, int line,
                      const char *expr) {
  try {
    f();
    failed++;
    last_msg.clear();
    fprintf(stderr, "%s:%d: %s did not throw, expected %s\n", file, line, expr,
            riverlet::kind_name(want));
  } catch (const riverlet::Error &e) {
    last_msg = e.what();
    if (e.kind() == want) {
      passed++;
      return true;
    }
    failed++;
    fprintf(stderr, "%s:%d: %s threw %s, expected %s: %s\n", file, line, expr, e.kind_name(),
            riverlet::kind_name(want), e.what());
  } catch (const std::exception &e) {
    failed++;
    fprintf(stderr, "%s:%d: %s threw a non-riverlet exception: %s\n", file, line, expr, e.what());
  }
  return false;
}

/* The riverlet::Error f throws, or std::nullopt when it returns. */
template <typename F>
static std::optional<riverlet::Error> caught(F &&f) {
  try {
    f();
  } catch (const riverlet::Error &e) {
    return e;
  }
  return std::nullopt;
}

/* The statement (an expression, or a CHECK) runs without throwing. */
#define OK(stmt) ok_at([&] { stmt; }, __FILE__, __LINE__, #stmt)
/* The expression throws riverlet::Error of kind riverlet::ErrorKind::KIND. */
#define THROWS(expr, KIND) \
  throws_at([&] { (void)(expr); }, riverlet::ErrorKind::KIND, __FILE__, __LINE__, #expr)

/* The last caught error's message contains `needle`. */
#define MSG_HAS(needle)                                                                  \
  do {                                                                                   \
    if (last_msg.find(needle) != std::string::npos) {                                    \
      passed++;                                                                          \
    } else {                                                                             \
      failed++;                                                                          \
      fprintf(stderr, "%s:%d: last error '%s' lacks '%s'\n", __FILE__, __LINE__,         \
              last_msg.c_str(), (needle));                                               \
    }                                                                                    \
  } while (0)

/* ---- Arrow helpers over arrow_util.h, returning owning riverlet wrappers ---- */

struct Field {
  const char *name;
  const char *format;
  bool nullable;
};

/* A struct schema of the given columns. */
static inline riverlet::Schema make_schema(std::initializer_list<Field> fields) {
  struct ArrowSchema s;
  au_schema_init(&s, static_cast<int>(fields.size()));
  int i = 0;
  for (const Field &f : fields) au_schema_set(&s, i++, f.name, f.format, f.nullable);
  return riverlet::Schema(&s);
}

/* A struct array built column by column: Batch(rows, cols).i64({...}).utf8({...}).done(). */
class Batch {
 public:
  Batch(int64_t rows, int cols) : rows_(rows) { au_array_init(&a_, rows, cols); }
  Batch(const Batch &) = delete;
  Batch &operator=(const Batch &) = delete;
  ~Batch() {
    if (a_.release != nullptr) a_.release(&a_);
  }
  Batch &i64(const std::vector<int64_t> &v, const std::vector<bool> &valid = {}) {
    auto bits = validity(valid);
    au_array_set_int64(&a_, col_++, v.data(), bits.get());
    return *this;
  }
  Batch &i32(const std::vector<int32_t> &v, const std::vector<bool> &valid = {}) {
    auto bits = validity(valid);
    au_array_set_int32(&a_, col_++, v.data(), bits.get());
    return *this;
  }
  /* nullptr entries are nulls */
  Batch &utf8(const std::vector<const char *> &v) {
    au_array_set_utf8(&a_, col_++, v.data());
    return *this;
  }
  riverlet::Array done() { return riverlet::Array(&a_); }

 private:
  std::unique_ptr<bool[]> validity(const std::vector<bool> &valid) const {
    if (valid.empty()) return nullptr;
    std::unique_ptr<bool[]> out(new bool[static_cast<size_t>(rows_)]);
    for (int64_t i = 0; i < rows_; i++) out[static_cast<size_t>(i)] = valid[static_cast<size_t>(i)];
    return out;
  }
  struct ArrowArray a_;
  int64_t rows_;
  int col_ = 0;
};

/* The rows of a stream as "{col=value, ...}\n" lines, sorted (as au_print_stream prints them);
 * reads the stream to its end through the C++ API. Stream errors propagate. */
static inline std::string stream_text(riverlet::ArrayStream &s) {
  riverlet::Schema schema = s.schema();
  std::vector<std::string> lines;
  for (riverlet::Array &batch : s) {
    for (int64_t r = 0; r < batch.length(); r++) {
      char line[1024];
      snprintf(line, sizeof line, "{");
      for (int64_t col = 0; col < schema->n_children; col++) {
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, "%s%s=", col ? ", " : "",
                 schema->children[col]->name);
        au_format_value(schema->children[col], batch->children[col], r + batch->offset, line,
                        sizeof line);
      }
      strncat(line, "}", sizeof line - strlen(line) - 1);
      lines.push_back(std::string(line) + "\n");
    }
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto &l : lines) out += l;
  return out;
}

static inline std::string stream_text(riverlet::ArrayStream &&s) { return stream_text(s); }

static inline bool has(const std::string &text, const char *needle) {
  return text.find(needle) != std::string::npos;
}

/* Runs one test function; an exception it lets out is a failure, and the program goes on. */
template <typename F>
static void run(const char *name, F &&f) {
  try {
    f();
  } catch (const riverlet::Error &e) {
    failed++;
    fprintf(stderr, "%s: uncaught riverlet::Error %s: %s\n", name, e.kind_name(), e.what());
  } catch (const std::exception &e) {
    failed++;
    fprintf(stderr, "%s: uncaught exception: %s\n", name, e.what());
  }
}

#define RUN(call) run(#call, [&] { call; })

#endif
