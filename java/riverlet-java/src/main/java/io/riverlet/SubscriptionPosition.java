package io.riverlet;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where a {@link Subscription} is: the next offset of every bucket it reads. Store it in a
 * checkpoint ({@link #toString()} / {@link #parse(String)}, or Java serialization) and resume
 * with {@link SubscribeOptions.Builder#startFrom(SubscriptionPosition)}. Immutable.
 */
public final class SubscriptionPosition implements Serializable {
  private static final long serialVersionUID = 1L;

  private final List<BucketOffset> offsets;

  /**
   * A position of these bucket offsets.
   *
   * @param offsets one entry per bucket
   */
  public SubscriptionPosition(List<BucketOffset> offsets) {
    this.offsets = List.copyOf(offsets);
  }

  /**
   * Every bucket's next offset.
   *
   * @return bucket offsets
   */
  public List<BucketOffset> offsets() {
    return offsets;
  }

  /**
   * The next offset of one bucket.
   *
   * @param partitionId the partition id, or null
   * @param bucket the bucket
   * @return the offset, or -1 when this position has no such bucket
   */
  public long offset(Long partitionId, int bucket) {
    for (BucketOffset b : offsets) {
      if (b.bucket() == bucket && Objects.equals(b.partitionId(), partitionId)) {
        return b.offset();
      }
    }
    return -1;
  }

  /**
   * Parses {@link #toString()}'s form: comma-separated {@code [p<partitionId>/]<bucket>@<offset>}.
   *
   * @param text the text
   * @return the position
   * @throws InvalidArgumentException naming the entry that does not parse
   */
  public static SubscriptionPosition parse(String text) {
    List<BucketOffset> out = new ArrayList<>();
    if (text != null && !text.isBlank()) {
      for (String part : text.split(",")) {
        String p = part.trim();
        try {
          Long pid = null;
          int slash = p.indexOf('/');
          if (slash >= 0) {
            if (!p.startsWith("p")) {
              throw new NumberFormatException("partition must be p<id>");
            }
            pid = Long.parseLong(p.substring(1, slash));
            p = p.substring(slash + 1);
          }
          int at = p.indexOf('@');
          if (at < 0) {
            throw new NumberFormatException("missing @");
          }
          out.add(new BucketOffset(pid, Integer.parseInt(p.substring(0, at)),
              Long.parseLong(p.substring(at + 1))));
        } catch (NumberFormatException e) {
          throw new InvalidArgumentException("bad subscription position entry '" + part.trim()
              + "' (expected [p<partitionId>/]<bucket>@<offset>): " + e.getMessage());
        }
      }
    }
    return new SubscriptionPosition(out);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SubscriptionPosition && offsets.equals(((SubscriptionPosition) o).offsets);
  }

  @Override
  public int hashCode() {
    return offsets.hashCode();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (BucketOffset b : offsets) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(b);
    }
    return sb.toString();
  }
}
