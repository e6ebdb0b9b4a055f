package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs the shared scenarios (tests/scenarios/seed.json) through the Java API, as the Rust, Python
 * and C runners do: create the tables, write their rows, run the reads marked {@code
 * before_upsert}, apply the upserts, run the other reads; each read is compared with {@code
 * expect} (rows in the read's column order, sorted by {@code order_by}).
 */
class SeedScenarioTest extends ServerTestBase {

  private static JsonNode seed() throws Exception {
    String dir = System.getProperty("riverlet.test.scenarios", "../../tests/scenarios");
    return new ObjectMapper().readTree(Path.of(dir, "seed.json").toFile());
  }

  private static ArrowType arrowType(String fluss) {
    switch (fluss) {
      case "INT":
        return new ArrowType.Int(32, true);
      case "BIGINT":
        return new ArrowType.Int(64, true);
      case "STRING":
        return ArrowType.Utf8.INSTANCE;
      default:
        throw new IllegalArgumentException("seed.json type " + fluss + " has no mapping here");
    }
  }

  private static Schema schemaOf(JsonNode spec) {
    List<Field> fields = new ArrayList<>();
    Set<String> pk = new LinkedHashSet<>(strings(spec.get("primary_key")));
    for (JsonNode c : spec.get("columns")) {
      String name = c.get(0).asText();
      fields.add(TestSupport.field(name, arrowType(c.get(1).asText()), !pk.contains(name)));
    }
    return new Schema(fields);
  }

  private static List<String> strings(JsonNode arr) {
    List<String> out = new ArrayList<>();
    if (arr != null) {
      arr.forEach(n -> out.add(n.asText()));
    }
    return out;
  }

  private static VectorSchemaRoot batch(BufferAllocator alloc, Schema schema, JsonNode rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
    root.allocateNew();
    int r = 0;
    for (JsonNode row : rows) {
      for (int c = 0; c < schema.getFields().size(); c++) {
        JsonNode v = row.get(c);
        Object vec = root.getVector(c);
        if (vec instanceof BigIntVector) {
          ((BigIntVector) vec).setSafe(r, v.asLong());
        } else if (vec instanceof IntVector) {
          ((IntVector) vec).setSafe(r, v.asInt());
        } else {
          ((VarCharVector) vec).setSafe(r, v.asText().getBytes(StandardCharsets.UTF_8));
        }
      }
      r++;
    }
    root.setRowCount(r);
    return root;
  }

  private static Object json(JsonNode n) {
    if (n.isIntegralNumber()) {
      return n.asLong();
    }
    return n.isNull() ? null : n.asText();
  }

  private static Object normalized(Object o) {
    return o instanceof Integer ? Long.valueOf((Integer) o) : o;
  }

  private static void write(Table t, JsonNode spec, String key) {
    if (spec.get(key) == null) {
      return;
    }
    try (VectorSchemaRoot root = batch(alloc(), schemaOf(spec), spec.get(key))) {
      if (t.info().hasPrimaryKey()) {
        t.upsert(root);
      } else {
        t.append(root);
      }
    }
    t.flush();
  }

  private static void runRead(String db, JsonNode read, JsonNode spec) throws Exception {
    List<String> columns = strings(read.get("columns"));
    ReadOptions.Builder o = ReadOptions.builder();
    if (!columns.isEmpty()) {
      o.columns(columns);
    } else {
      spec.get("columns").forEach(c -> columns.add(c.get(0).asText()));
    }
    if (read.has("filter")) {
      o.filter(read.get("filter").asText());
    }
    List<List<Object>> got;
    try (Table t = conn.table(db + "." + read.get("table").asText())) {
      got = TestSupport.readAll(t.scan(o.build()));
    }
    int orderBy = columns.indexOf(read.get("order_by").asText());
    got.sort((a, b) -> Long.compare(((Number) a.get(orderBy)).longValue(),
        ((Number) b.get(orderBy)).longValue()));
    List<List<Object>> actual = new ArrayList<>();
    for (List<Object> row : got) {
      List<Object> n = new ArrayList<>();
      row.forEach(v -> n.add(normalized(v)));
      actual.add(n);
    }
    List<List<Object>> expected = new ArrayList<>();
    for (JsonNode row : read.get("expect")) {
      List<Object> e = new ArrayList<>();
      row.forEach(v -> e.add(json(v)));
      expected.add(e);
    }
    assertEquals(expected, actual, read.get("name").asText());
  }

  @TestFactory
  List<DynamicTest> seedScenarios() throws Exception {
    JsonNode seed = seed();
    String db = seed.get("database").asText() + "_java_" + ProcessHandle.current().pid();
    Map<String, JsonNode> tables = new LinkedHashMap<>();
    Iterator<Map.Entry<String, JsonNode>> it = seed.get("tables").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      tables.put(e.getKey(), e.getValue());
    }
    List<DynamicTest> tests = new ArrayList<>();
    tests.add(DynamicTest.dynamicTest("create and write the seed tables", () -> {
      admin.createDatabase(db, true);
      for (Map.Entry<String, JsonNode> e : tables.entrySet()) {
        JsonNode spec = e.getValue();
        String name = db + "." + e.getKey();
        TableDescriptor.Builder d = TableDescriptor.builder(schemaOf(spec))
            .primaryKey(strings(spec.get("primary_key")))
            .partitionKeys(strings(spec.get("partition_by")));
        if (spec.has("buckets")) {
          d.bucketCount(spec.get("buckets").asInt());
        }
        admin.createTable(name, d.build(), true);
        awaitLeaders(name, () -> admin.createTable(name, d.build(), false));
        List<String> partitionKeys = strings(spec.get("partition_by"));
        List<String> cols = new ArrayList<>();
        spec.get("columns").forEach(c -> cols.add(c.get(0).asText()));
        Set<Map<String, String>> specs = new LinkedHashSet<>();
        for (JsonNode row : spec.get("rows")) {
          Map<String, String> p = new LinkedHashMap<>();
          for (String k : partitionKeys) {
            p.put(k, row.get(cols.indexOf(k)).asText());
          }
          if (!p.isEmpty()) {
            specs.add(p);
          }
        }
        for (Map<String, String> p : specs) {
          admin.createPartition(name, p, true);
        }
        try (Table t = conn.table(name)) {
          write(t, spec, "rows");
        }
      }
    }));
    List<JsonNode> before = new ArrayList<>();
    List<JsonNode> after = new ArrayList<>();
    for (JsonNode read : seed.get("reads")) {
      (read.path("before_upsert").asBoolean(false) ? before : after).add(read);
    }
    for (JsonNode read : before) {
      tests.add(DynamicTest.dynamicTest(read.get("name").asText(),
          () -> runRead(db, read, tables.get(read.get("table").asText()))));
    }
    tests.add(DynamicTest.dynamicTest("apply the seed upserts", () -> {
      for (Map.Entry<String, JsonNode> e : tables.entrySet()) {
        try (Table t = conn.table(db + "." + e.getKey())) {
          write(t, e.getValue(), "upsert");
        }
      }
    }));
    for (JsonNode read : after) {
      tests.add(DynamicTest.dynamicTest(read.get("name").asText(),
          () -> runRead(db, read, tables.get(read.get("table").asText()))));
    }
    return tests;
  }
}
