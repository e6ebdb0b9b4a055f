package io.riverlet;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Something the core wants a caller to know about a request that still succeeded, e.g. a
 * time-range window starting before {@code now - table.log.ttl}. Warnings are data: {@link
 * ReadResult#warnings()} carries those of a read, and each connector shows them its own way
 * (the Spark connector logs them on the driver).
 */
public final class Warning {
  /** {@link #kind()} of a window starting before the table's log retention. */
  public static final String BEFORE_RETENTION = "before_retention";

  private final String kind;
  private final String message;

  Warning(String kind, String message) {
    this.kind = kind;
    this.message = message;
  }

  /** The native library's {@code [kind, message, kind, message, ...]} as warnings. */
  static List<Warning> fromPairs(String[] pairs) {
    if (pairs == null || pairs.length == 0) {
      return List.of();
    }
    List<Warning> out = new ArrayList<>(pairs.length / 2);
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      out.add(new Warning(pairs[i], pairs[i + 1]));
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * The core's stable name of the warning's kind, e.g. {@link #BEFORE_RETENTION}.
   *
   * @return the kind
   */
  public String kind() {
    return kind;
  }

  /**
   * The text to show, naming the table and the values involved.
   *
   * @return the message
   */
  public String message() {
    return message;
  }

  @Override
  public String toString() {
    return kind + ": " + message;
  }
}
