/*
 * arrow_util.h: a tiny, self-contained helper to build and print Arrow C Data Interface
 * structs in the Riverlet C example and tests. Real programs would use nanoarrow or Arrow C++;
 * this file only covers the few column types the example needs:
 *   int32 ("i"), int64 ("l"), float64 ("g"), bool ("b"), utf8 ("u"), timestamp[ms] ("tsm:").
 *
 * Building:  au_schema_init(&schema, n); au_schema_set(&schema, i, name, format, nullable);
 *            au_array_init(&array, rows, n); au_array_set_*(&array, i, ...);
 * Everything is allocated with malloc and freed by the structs' release callbacks.
 * Printing:  au_print_stream(stream, out) prints one line per row, sorted, so output does not
 *            depend on bucket order.
 */
#ifndef RIVERLET_EXAMPLES_ARROW_UTIL_H
#define RIVERLET_EXAMPLES_ARROW_UTIL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "riverlet.h"

static inline char *au_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = (char *)malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* ---- schemas ---- */

static inline void au_schema_release(struct ArrowSchema *s) {
  int64_t i;
  if (s == NULL || s->release == NULL) return;
  for (i = 0; i < s->n_children; i++) {
    struct ArrowSchema *c = s->children[i];
    if (c != NULL) {
      if (c->release != NULL) c->release(c);
      free(c);
    }
  }
  free(s->children);
  free((void *)s->format);
  free((void *)s->name);
  s->release = NULL;
}

/* A struct schema ("+s") of n columns; set each with au_schema_set. */
static inline void au_schema_init(struct ArrowSchema *s, int n) {
  int i;
  memset(s, 0, sizeof(*s));
  s->format = au_strdup("+s");
  s->name = au_strdup("");
  s->n_children = n;
  s->children = (struct ArrowSchema **)calloc((size_t)(n > 0 ? n : 1), sizeof(struct ArrowSchema *));
  for (i = 0; i < n; i++) {
    s->children[i] = (struct ArrowSchema *)calloc(1, sizeof(struct ArrowSchema));
  }
  s->release = au_schema_release;
}

static inline void au_schema_set(struct ArrowSchema *s, int i, const char *name, const char *format,
                          bool nullable) {
  struct ArrowSchema *c = s->children[i];
  c->format = au_strdup(format);
  c->name = au_strdup(name);
  c->flags = nullable ? ARROW_FLAG_NULLABLE : 0;
  c->release = au_schema_release;
}

/* ---- arrays ---- */

static inline void au_array_release_buffers(struct ArrowArray *a) {
  int64_t i;
  for (i = 0; i < a->n_buffers; i++) free((void *)a->buffers[i]);
  free((void *)a->buffers);
}

static inline void au_child_release(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) return;
  au_array_release_buffers(a);
  a->release = NULL;
}

static inline void au_array_release(struct ArrowArray *a) {
  int64_t i;
  if (a == NULL || a->release == NULL) return;
  for (i = 0; i < a->n_children; i++) {
    struct ArrowArray *c = a->children[i];
    if (c != NULL) {
      if (c->release != NULL) c->release(c);
      free(c);
    }
  }
  free(a->children);
  au_array_release_buffers(a);
  a->release = NULL;
}

/* A struct array of `rows` rows and n columns; set each with au_array_set_*. */
static inline void au_array_init(struct ArrowArray *a, int64_t rows, int n) {
  int i;
  memset(a, 0, sizeof(*a));
  a->length = rows;
  a->n_buffers = 1;
  a->buffers = (const void **)calloc(1, sizeof(void *));
  a->n_children = n;
  a->children = (struct ArrowArray **)calloc((size_t)(n > 0 ? n : 1), sizeof(struct ArrowArray *));
  for (i = 0; i < n; i++) {
    a->children[i] = (struct ArrowArray *)calloc(1, sizeof(struct ArrowArray));
  }
  a->release = au_array_release;
}

/* The validity bitmap of `valid` (NULL: all valid -> no bitmap). */
static inline uint8_t *au_validity(const bool *valid, int64_t rows, int64_t *null_count) {
  int64_t i;
  uint8_t *bits;
  *null_count = 0;
  if (valid == NULL) return NULL;
  bits = (uint8_t *)calloc((size_t)(rows / 8 + 1), 1);
  for (i = 0; i < rows; i++) {
    if (valid[i]) {
      bits[i / 8] |= (uint8_t)(1u << (i % 8));
    } else {
      (*null_count)++;
    }
  }
  return bits;
}

/* A fixed-width column of `width`-byte values. */
static inline void au_array_set_fixed(struct ArrowArray *a, int i, const void *values, size_t width,
                               const bool *valid) {
  struct ArrowArray *c = a->children[i];
  size_t bytes = (size_t)a->length * width;
  void *data = malloc(bytes > 0 ? bytes : 1);
  if (bytes > 0) memcpy(data, values, bytes);
  c->length = a->length;
  c->n_buffers = 2;
  c->buffers = (const void **)calloc(2, sizeof(void *));
  c->buffers[0] = au_validity(valid, a->length, &c->null_count);
  c->buffers[1] = data;
  c->release = au_child_release;
}

static inline void au_array_set_int64(struct ArrowArray *a, int i, const int64_t *v, const bool *valid) {
  au_array_set_fixed(a, i, v, sizeof(int64_t), valid);
}

static inline void au_array_set_int32(struct ArrowArray *a, int i, const int32_t *v, const bool *valid) {
  au_array_set_fixed(a, i, v, sizeof(int32_t), valid);
}

static inline void au_array_set_double(struct ArrowArray *a, int i, const double *v, const bool *valid) {
  au_array_set_fixed(a, i, v, sizeof(double), valid);
}

/* A utf8 column; a NULL entry is a null value. */
static inline void au_array_set_utf8(struct ArrowArray *a, int i, const char *const *values) {
  struct ArrowArray *c = a->children[i];
  int64_t r, total = 0;
  int32_t *offsets = (int32_t *)malloc((size_t)(a->length + 1) * sizeof(int32_t));
  bool *valid = (bool *)malloc((size_t)(a->length > 0 ? a->length : 1) * sizeof(bool));
  char *data;
  bool any_null = false;
  for (r = 0; r < a->length; r++) {
    valid[r] = values[r] != NULL;
    if (!valid[r]) any_null = true;
    total += values[r] ? (int64_t)strlen(values[r]) : 0;
  }
  data = (char *)malloc((size_t)(total > 0 ? total : 1));
  offsets[0] = 0;
  for (r = 0; r < a->length; r++) {
    size_t n = values[r] ? strlen(values[r]) : 0;
    if (n > 0) memcpy(data + offsets[r], values[r], n);
    offsets[r + 1] = offsets[r] + (int32_t)n;
  }
  c->length = a->length;
  c->n_buffers = 3;
  c->buffers = (const void **)calloc(3, sizeof(void *));
  c->buffers[0] = au_validity(any_null ? valid : NULL, a->length, &c->null_count);
  c->buffers[1] = offsets;
  c->buffers[2] = data;
  c->release = au_child_release;
  free(valid);
}

/* ---- printing ---- */

static inline bool au_is_valid(const struct ArrowArray *c, int64_t row) {
  const uint8_t *bits = (const uint8_t *)c->buffers[0];
  int64_t i = row + c->offset;
  if (c->null_count == 0 || bits == NULL) return true;
  return (bits[i / 8] >> (i % 8)) & 1;
}

/* Appends the text of one value to buf (format per the Arrow C data interface). */
static inline void au_format_value(const struct ArrowSchema *s, const struct ArrowArray *c, int64_t row,
                            char *buf, size_t cap) {
  const char *f = s->format;
  int64_t i = row + c->offset;
  size_t used = strlen(buf);
  char *out = buf + used;
  size_t left = cap - used;
  if (!au_is_valid(c, row)) {
    snprintf(out, left, "null");
  } else if (strcmp(f, "l") == 0 || strncmp(f, "ts", 2) == 0) {
    snprintf(out, left, "%" PRId64, ((const int64_t *)c->buffers[1])[i]);
  } else if (strcmp(f, "i") == 0) {
    snprintf(out, left, "%" PRId32, ((const int32_t *)c->buffers[1])[i]);
  } else if (strcmp(f, "g") == 0) {
    snprintf(out, left, "%g", ((const double *)c->buffers[1])[i]);
  } else if (strcmp(f, "b") == 0) {
    const uint8_t *bits = (const uint8_t *)c->buffers[1];
    snprintf(out, left, "%s", ((bits[i / 8] >> (i % 8)) & 1) ? "true" : "false");
  } else if (strcmp(f, "u") == 0) {
    const int32_t *off = (const int32_t *)c->buffers[1];
    const char *data = (const char *)c->buffers[2];
    snprintf(out, left, "'%.*s'", (int)(off[i + 1] - off[i]), data + off[i]);
  } else {
    snprintf(out, left, "<%s>", f);
  }
}

static inline int au_cmp_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Reads the whole stream, prints "prefix{col=value, ...}" per row (rows sorted) to out and
 * releases the stream. Returns the number of rows, or -1 on a stream error (printed).
 */
static inline int64_t au_print_stream(struct ArrowArrayStream *stream, const char *prefix, FILE *out) {
  struct ArrowSchema schema;
  char **lines = NULL;
  int64_t n_lines = 0, cap = 0, i;
  bool failed = false;
  int rc = stream->get_schema(stream, &schema);
  if (rc != 0) {
    const char *e = stream->get_last_error(stream);
    fprintf(out, "stream error: %s\n", e ? e : "(none)");
    stream->release(stream);
    return -1;
  }
  for (;;) {
    struct ArrowArray batch;
    int64_t r;
    rc = stream->get_next(stream, &batch);
    if (rc != 0) {
      const char *e = stream->get_last_error(stream);
      fprintf(out, "stream error: %s\n", e ? e : "(none)");
      failed = true;
      break;
    }
    if (batch.release == NULL) break; /* end of stream */
    for (r = 0; r < batch.length; r++) {
      char line[1024];
      int64_t col;
      snprintf(line, sizeof line, "%s{", prefix);
      for (col = 0; col < schema.n_children; col++) {
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, "%s%s=", col ? ", " : "",
                 schema.children[col]->name);
        au_format_value(schema.children[col], batch.children[col], r + batch.offset, line,
                        sizeof line);
      }
      strncat(line, "}", sizeof line - strlen(line) - 1);
      if (n_lines == cap) {
        cap = cap ? cap * 2 : 16;
        lines = (char **)realloc(lines, (size_t)cap * sizeof(char *));
      }
      lines[n_lines++] = au_strdup(line);
    }
    batch.release(&batch);
  }
  if (n_lines > 0) qsort(lines, (size_t)n_lines, sizeof(char *), au_cmp_lines);
  for (i = 0; i < n_lines; i++) {
    if (!failed) fprintf(out, "%s\n", lines[i]);
    free(lines[i]);
  }
  free(lines);
  schema.release(&schema);
  stream->release(stream);
  return failed ? -1 : n_lines;
}

#endif /* RIVERLET_EXAMPLES_ARROW_UTIL_H */
