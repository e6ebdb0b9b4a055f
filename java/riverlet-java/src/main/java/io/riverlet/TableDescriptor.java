package io.riverlet;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What {@link Admin#createTable} creates: an Arrow schema (mapped to Fluss types by the core),
 * an optional primary key, partition keys, bucketing, properties and a comment.
 *
 * <pre>{@code
 * TableDescriptor d = TableDescriptor.builder(schema)
 *     .primaryKey("id").partitionKeys("dt").bucketCount(4)
 *     .property("table.log.ttl", "7d").comment("orders").build();
 * }</pre>
 */
public final class TableDescriptor {
  private final Schema schema;
  private final List<String> primaryKey;
  private final List<String> partitionKeys;
  private final List<String> bucketKeys;
  private final Integer bucketCount;
  private final Map<String, String> properties;
  private final Map<String, String> customProperties;
  private final String comment;

  private TableDescriptor(Builder b) {
    this.schema = b.schema;
    this.primaryKey = List.copyOf(b.primaryKey);
    this.partitionKeys = List.copyOf(b.partitionKeys);
    this.bucketKeys = List.copyOf(b.bucketKeys);
    this.bucketCount = b.bucketCount;
    this.properties = Collections.unmodifiableMap(new LinkedHashMap<>(b.properties));
    this.customProperties = Collections.unmodifiableMap(new LinkedHashMap<>(b.customProperties));
    this.comment = b.comment;
  }

  /**
   * A builder for a table with this Arrow schema (column nullability and types are kept).
   *
   * @param schema the columns
   * @return a builder
   */
  public static Builder builder(Schema schema) {
    return new Builder(schema);
  }

  /**
   * The Arrow schema.
   *
   * @return the schema
   */
  public Schema schema() {
    return schema;
  }

  /**
   * The primary-key columns (empty for a log table).
   *
   * @return the primary key
   */
  public List<String> primaryKey() {
    return primaryKey;
  }

  /**
   * The partition keys (empty when not partitioned).
   *
   * @return partition keys
   */
  public List<String> partitionKeys() {
    return partitionKeys;
  }

  /**
   * The bucket keys (empty: the primary key minus partition keys, or random for a log table).
   *
   * @return bucket keys
   */
  public List<String> bucketKeys() {
    return bucketKeys;
  }

  /**
   * The number of buckets, or null for the server's default.
   *
   * @return buckets
   */
  public Integer bucketCount() {
    return bucketCount;
  }

  /**
   * Fluss table properties ({@code table.log.ttl}, {@code table.merge-engine}, ...).
   *
   * @return properties
   */
  public Map<String, String> properties() {
    return properties;
  }

  /**
   * Custom properties (stored, not interpreted by Fluss).
   *
   * @return custom properties
   */
  public Map<String, String> customProperties() {
    return customProperties;
  }

  /**
   * The table comment.
   *
   * @return the comment, or null
   */
  public String comment() {
    return comment;
  }

  /** Builds a {@link TableDescriptor}. */
  public static final class Builder {
    private final Schema schema;
    private List<String> primaryKey = List.of();
    private List<String> partitionKeys = List.of();
    private List<String> bucketKeys = List.of();
    private Integer bucketCount;
    private final Map<String, String> properties = new LinkedHashMap<>();
    private final Map<String, String> customProperties = new LinkedHashMap<>();
    private String comment;

    private Builder(Schema schema) {
      this.schema = Objects.requireNonNull(schema, "schema");
    }

    /**
     * The primary-key columns (makes a primary-key table).
     *
     * @param columns column names
     * @return this
     */
    public Builder primaryKey(String... columns) {
      return primaryKey(Arrays.asList(columns));
    }

    /**
     * The primary-key columns.
     *
     * @param columns column names
     * @return this
     */
    public Builder primaryKey(List<String> columns) {
      this.primaryKey = List.copyOf(columns);
      return this;
    }

    /**
     * The partition keys.
     *
     * @param columns column names
     * @return this
     */
    public Builder partitionKeys(String... columns) {
      return partitionKeys(Arrays.asList(columns));
    }

    /**
     * The partition keys.
     *
     * @param columns column names
     * @return this
     */
    public Builder partitionKeys(List<String> columns) {
      this.partitionKeys = List.copyOf(columns);
      return this;
    }

    /**
     * The bucket keys.
     *
     * @param columns column names
     * @return this
     */
    public Builder bucketKeys(String... columns) {
      return bucketKeys(Arrays.asList(columns));
    }

    /**
     * The bucket keys.
     *
     * @param columns column names
     * @return this
     */
    public Builder bucketKeys(List<String> columns) {
      this.bucketKeys = List.copyOf(columns);
      return this;
    }

    /**
     * The number of buckets.
     *
     * @param buckets at least 1
     * @return this
     */
    public Builder bucketCount(int buckets) {
      this.bucketCount = buckets;
      return this;
    }

    /**
     * One Fluss table property.
     *
     * @param key the property name
     * @param value its value
     * @return this
     */
    public Builder property(String key, String value) {
      properties.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, key));
      return this;
    }

    /**
     * Fluss table properties.
     *
     * @param props name to value
     * @return this
     */
    public Builder properties(Map<String, String> props) {
      props.forEach(this::property);
      return this;
    }

    /**
     * One custom property.
     *
     * @param key the property name
     * @param value its value
     * @return this
     */
    public Builder customProperty(String key, String value) {
      customProperties.put(
          Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, key));
      return this;
    }

    /**
     * The table comment.
     *
     * @param comment the comment
     * @return this
     */
    public Builder comment(String comment) {
      this.comment = comment;
      return this;
    }

    /**
     * The descriptor (the core validates it when the table is created).
     *
     * @return the descriptor
     */
    public TableDescriptor build() {
      return new TableDescriptor(this);
    }
  }
}
