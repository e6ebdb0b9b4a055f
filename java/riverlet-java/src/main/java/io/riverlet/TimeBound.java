package io.riverlet;

import java.time.Instant;
import java.util.Objects;

/**
 * One bound of a commit-time window {@code [start, end)}, in one of the forms the core accepts:
 * epoch milliseconds, an {@link Instant}, or text ({@code "2024-01-01 12:00:00"}, {@code
 * "2024-01-01T12:00:00.123+02:00"}, {@code "2024-01-01"}, or epoch-millisecond digits). Text
 * without an offset is read in the read's zone ({@link ReadOptions.Builder#zone}). The core
 * parses and validates it; a bad bound is an {@link InvalidArgumentException} naming it.
 */
public final class TimeBound {
  static final int EPOCH_MILLIS = 1;
  static final int TEXT = 2;
  static final int INSTANT = 3;

  final int kind;
  final long millis;
  final long seconds;
  final int nanos;
  final String text;

  private TimeBound(int kind, long millis, long seconds, int nanos, String text) {
    this.kind = kind;
    this.millis = millis;
    this.seconds = seconds;
    this.nanos = nanos;
    this.text = text;
  }

  /**
   * Epoch milliseconds.
   *
   * @param epochMillis milliseconds since 1970-01-01T00:00:00Z
   * @return the bound
   */
  public static TimeBound epochMillis(long epochMillis) {
    return new TimeBound(EPOCH_MILLIS, epochMillis, 0, 0, null);
  }

  /**
   * An instant (the zone does not apply).
   *
   * @param instant the instant
   * @return the bound
   */
  public static TimeBound instant(Instant instant) {
    Objects.requireNonNull(instant, "instant");
    return new TimeBound(INSTANT, 0, instant.getEpochSecond(), instant.getNano(), null);
  }

  /**
   * Text in one of the core's timestamp forms.
   *
   * @param text the timestamp text
   * @return the bound
   */
  public static TimeBound text(String text) {
    return new TimeBound(TEXT, 0, 0, 0, Objects.requireNonNull(text, "text"));
  }

  /**
   * The epoch milliseconds the core resolves this bound to when a read's window is read in
   * {@code zone}: what a connector uses to pin a window at planning time (e.g. a Spark DATE
   * argument given as {@code "2026-01-01"} text) without parsing timestamps itself.
   *
   * @param zone the zone for text without an offset ({@code "UTC"}, {@code "+08:00"}, an IANA
   *     name, {@code "local"}); null means the process's local zone, as in {@link
   *     ReadOptions.Builder#zone}
   * @return epoch milliseconds
   * @throws InvalidArgumentException for an unparseable or blank text or an unknown zone (named)
   */
  public long resolve(String zone) {
    NativeLibrary.ensureLoaded();
    return NativeMethods.resolveTimeBound(this, zone);
  }

  @Override
  public String toString() {
    switch (kind) {
      case EPOCH_MILLIS:
        return Long.toString(millis);
      case INSTANT:
        return Instant.ofEpochSecond(seconds, nanos).toString();
      default:
        return text;
    }
  }
}
