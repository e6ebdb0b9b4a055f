/*
 * check.h: the assertions of the C API's test programs (test_capi.c, test_parity.c,
 * test_routing.c), one copy. Each program counts its checks in `passed` and `failed` and ends
 * with a "N passed, N failed" line; a failed check prints its file, line and what failed (for a
 * call: the status it returned and the last error message) and the program goes on.
 */
#ifndef RIVERLET_C_TESTS_CHECK_H
#define RIVERLET_C_TESTS_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "riverlet.h"

static int passed = 0;
static int failed = 0;

/* The last error message of this thread, never NULL. */
static inline const char *msg(void) {
  const char *m = riverlet_last_error_message();
  return m ? m : "(no message)";
}

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (cond) {                                                                 \
      passed++;                                                                 \
    } else {                                                                    \
      failed++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                           \
  } while (0)

static inline bool expect_at(RiverletStatus got, RiverletStatus want, const char *file,
                             const char *expr, int line) {
  if (got == want) {
    passed++;
    return true;
  }
  failed++;
  fprintf(stderr, "%s:%d: %s returned %s, expected %s: %s\n", file, line, expr,
          riverlet_status_name((int32_t)got), riverlet_status_name((int32_t)want), msg());
  return false;
}

/* Checks the status of a call; true when it is the expected one. */
#define EXPECT(call, expected) expect_at((call), (expected), __FILE__, #call, __LINE__)

#define OK(call) EXPECT(call, RIVERLET_STATUS_OK)

/* The last error message contains `needle`. */
#define MSG_HAS(needle)                                                                 \
  do {                                                                                  \
    if (strstr(msg(), (needle)) != NULL) {                                              \
      passed++;                                                                         \
    } else {                                                                            \
      failed++;                                                                         \
      fprintf(stderr, "%s:%d: last error '%s' lacks '%s'\n", __FILE__, __LINE__, msg(), \
              (needle));                                                                \
    }                                                                                   \
  } while (0)

#endif
