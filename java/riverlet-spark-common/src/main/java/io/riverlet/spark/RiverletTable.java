package io.riverlet.spark;

import io.riverlet.TableInfo;
import io.riverlet.spark.read.RiverletScanBuilder;
import io.riverlet.spark.write.RiverletWriteBuilder;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Fluss table in Spark: batch and micro-batch reads, batch writes (appends to log tables,
 * upserts to primary-key tables). {@link #properties()} shows the primary key, the buckets and
 * the table's Fluss options, so {@code DESCRIBE TABLE EXTENDED} lists them. A lake view
 * ({@code t$lake}, {@code t$lake$snapshots}) is read in batch only.
 */
public final class RiverletTable implements SupportsRead, SupportsWrite {
  private final ConnectionSpec spec;
  private final TableInfo info;
  private final String name;
  private final Schema arrowSchema;
  private final boolean lakeView;
  private final StructType schema;

  RiverletTable(ConnectionSpec spec, TableInfo info) {
    this(spec, info, info.name(), false);
  }

  /**
   * A table or, with {@code lakeView}, a lake view of {@code info}'s table ({@code name} is
   * then {@code db.t$lake} or {@code db.t$lake$snapshots} and {@code info} the view's as the
   * core opened it, with the view's schema): read-only, one split.
   */
  RiverletTable(ConnectionSpec spec, TableInfo info, String name, boolean lakeView) {
    this.spec = spec;
    this.info = info;
    this.name = name;
    this.arrowSchema = info.schema();
    this.lakeView = lakeView;
    this.schema = TypeMapping.toSpark(arrowSchema);
  }

  /** Whether this is a lake view ({@code t$lake}, {@code t$lake$snapshots}). */
  public boolean isLakeView() {
    return lakeView;
  }

  /** The Arrow schema of the rows a read returns (the view's for a lake view). */
  public Schema arrowSchema() {
    return arrowSchema;
  }

  /** The connection the table was loaded through. */
  public ConnectionSpec spec() {
    return spec;
  }

  /** The table's Fluss metadata. */
  public TableInfo info() {
    return info;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Transform[] partitioning() {
    if (lakeView) {
      return new Transform[0];
    }
    return info.partitionKeys().stream().map(Expressions::identity).toArray(Transform[]::new);
  }

  @Override
  public Map<String, String> properties() {
    Map<String, String> p = new LinkedHashMap<>();
    if (info.hasPrimaryKey()) {
      p.put(SparkCatalog.PRIMARY_KEY, String.join(",", info.primaryKey()));
    }
    p.put(SparkCatalog.BUCKET_NUM, Integer.toString(info.bucketCount()));
    if (!info.bucketKeys().isEmpty()) {
      p.put(SparkCatalog.BUCKET_KEY, String.join(",", info.bucketKeys()));
    }
    if (info.comment() != null) {
      p.put("comment", info.comment());
    }
    p.putAll(info.properties());
    p.putAll(info.customProperties());
    return p;
  }

  @Override
  public Set<TableCapability> capabilities() {
    if (lakeView) {
      return EnumSet.of(TableCapability.BATCH_READ);
    }
    return EnumSet.of(
        TableCapability.BATCH_READ,
        TableCapability.MICRO_BATCH_READ,
        TableCapability.BATCH_WRITE,
        // Declared so that INSERT OVERWRITE reaches our WriteBuilder, which rejects it with a
        // message naming the table and what to do instead.
        TableCapability.TRUNCATE,
        TableCapability.OVERWRITE_BY_FILTER,
        TableCapability.OVERWRITE_DYNAMIC);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new RiverletScanBuilder(this, options);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo writeInfo) {
    if (lakeView) {
      throw new UnsupportedOperationException("the lake view " + name + " is read-only");
    }
    return new RiverletWriteBuilder(this, writeInfo);
  }

  @Override
  public String toString() {
    return "RiverletTable(" + name + ")";
  }
}
