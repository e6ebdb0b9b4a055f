package io.riverlet;

/** Which offset {@link Admin#listOffsets} asks for. */
public final class OffsetSpec {
  private static final OffsetSpec EARLIEST = new OffsetSpec(0, 0);
  private static final OffsetSpec LATEST = new OffsetSpec(1, 0);

  final int kind;
  final long timestamp;

  private OffsetSpec(int kind, long timestamp) {
    this.kind = kind;
    this.timestamp = timestamp;
  }

  /**
   * The log start offset.
   *
   * @return the spec
   */
  public static OffsetSpec earliest() {
    return EARLIEST;
  }

  /**
   * The high watermark (the offset the next record gets).
   *
   * @return the spec
   */
  public static OffsetSpec latest() {
    return LATEST;
  }

  /**
   * The offset of the first batch committed at or after {@code epochMillis}.
   *
   * @param epochMillis a commit time, epoch milliseconds
   * @return the spec
   */
  public static OffsetSpec timestamp(long epochMillis) {
    return new OffsetSpec(2, epochMillis);
  }

  @Override
  public String toString() {
    return kind == 0 ? "earliest" : kind == 1 ? "latest" : "timestamp:" + timestamp;
  }
}
