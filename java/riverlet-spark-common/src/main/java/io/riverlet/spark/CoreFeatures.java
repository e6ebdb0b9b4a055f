package io.riverlet.spark;

import io.riverlet.ReadOptions;
import io.riverlet.Table;
import io.riverlet.UnsupportedException;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * What the native library of this JVM supports, probed once: reading chosen buckets only (then
 * a read is planned as one Spark partition per bucket; without it, one per Fluss partition).
 */
public final class CoreFeatures {
  private static final AtomicReference<Boolean> BUCKET_READS = new AtomicReference<>();

  private CoreFeatures() {}

  /** Whether reads can select buckets ({@code ReadOptions.buckets}). */
  public static boolean bucketReads(ConnectionSpec spec, String table, List<String> columns) {
    Boolean known = BUCKET_READS.get();
    if (known != null) {
      return known;
    }
    boolean supported;
    try (Table t = spec.connection().table(table);
        ArrowReader r =
            t.scan(ReadOptions.builder().columns(columns.subList(0, 1)).buckets(0).limit(0)
                .build(), ConnectionSpec.allocator())) {
      r.getVectorSchemaRoot();
      supported = true;
    } catch (UnsupportedException e) {
      supported = false;
    } catch (IOException e) {
      supported = true;
    }
    BUCKET_READS.compareAndSet(null, supported);
    return supported;
  }
}
