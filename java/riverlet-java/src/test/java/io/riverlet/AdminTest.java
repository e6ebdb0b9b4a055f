package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Tag(ServerTestBase.INTEROP_TAG)
class AdminTest extends ServerTestBase {

  @Test
  void databasesAndTables() {
    String db = TestSupport.uniqueName("admin");
    assertFalse(admin.databaseExists(db));
    admin.createDatabase(db, false);
    assertTrue(admin.databaseExists(db));
    assertTrue(admin.listDatabases().contains(db));
    assertThrows(DatabaseAlreadyExistsException.class, () -> admin.createDatabase(db, false));
    admin.createDatabase(db, true);

    TableDescriptor d =
        TableDescriptor.builder(TestSupport.idNameRegion())
            .primaryKey("id")
            .bucketCount(3)
            .property("table.log.ttl", "2d")
            .customProperty("owner", "team-a")
            .comment("people")
            .build();
    admin.createTable(db + ".people", d, false);
    assertThrows(
        TableAlreadyExistsException.class, () -> admin.createTable(db + ".people", d, false));
    admin.createTable(db + ".people", d, true);
    assertTrue(admin.tableExists(db + ".people"));
    assertEquals(List.of("people"), admin.listTables(db));

    TableInfo info = admin.getTableInfo(db + ".people");
    assertEquals(db + ".people", info.name());
    assertEquals(db, info.database());
    assertEquals("people", info.tableName());
    assertEquals(List.of("id"), info.primaryKey());
    assertTrue(info.hasPrimaryKey());
    assertFalse(info.isPartitioned());
    assertEquals(3, info.bucketCount());
    assertEquals(List.of("id"), info.bucketKeys());
    assertEquals("2d", info.properties().get("table.log.ttl"));
    assertEquals("team-a", info.customProperties().get("owner"));
    assertEquals("people", info.comment());
    assertTrue(info.tableId() >= 0);
    assertEquals(
        List.of("id", "name", "region"),
        info.schema().getFields().stream().map(f -> f.getName()).collect(Collectors.toList()));
    assertFalse(info.schema().findField("id").isNullable());
    assertEquals(new ArrowType.Int(64, true), info.schema().findField("id").getType());

    try (Table t = conn.table(db + ".people")) {
      assertEquals(info.tableId(), t.info().tableId());
      assertEquals(info.schema(), t.schema());
      assertEquals(List.of("id"), t.keyColumns());
    }

    admin.dropTable(db + ".people", false);
    assertFalse(admin.tableExists(db + ".people"));
    assertThrows(TableNotFoundException.class, () -> admin.dropTable(db + ".people", false));
    admin.dropTable(db + ".people", true);
    assertThrows(TableNotFoundException.class, () -> admin.getTableInfo(db + ".people"));
    assertThrows(TableNotFoundException.class, () -> conn.table(db + ".people"));

    admin.dropDatabase(db, false, false);
    assertFalse(admin.databaseExists(db));
    assertThrows(DatabaseNotFoundException.class, () -> admin.dropDatabase(db, false, false));
    assertThrows(DatabaseNotFoundException.class, () -> admin.listTables(db));
  }

  @Test
  void logTableWithoutKeysHasNoPrimaryKeyAndNullComment() {
    String db = newDatabase();
    String name =
        createTable(db, "events", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    TableInfo info = admin.getTableInfo(name);
    assertEquals(List.of(), info.primaryKey());
    assertNull(info.comment());
  }

  @Test
  void partitionsAndOffsets() throws Exception {
    String db = newDatabase();
    Schema s = TestSupport.idNameRegion();
    String name =
        createTable(
            db,
            "by_region",
            TableDescriptor.builder(s).partitionKeys("region").bucketCount(2).build());
    assertEquals(List.of(), admin.listPartitions(name));
    admin.createPartition(name, Map.of("region", "eu"), false);
    admin.createPartition(name, Map.of("region", "us"), false);
    assertThrows(
        PartitionAlreadyExistsException.class,
        () -> admin.createPartition(name, Map.of("region", "eu"), false));
    List<PartitionInfo> parts = admin.listPartitions(name);
    assertEquals(
        List.of("eu", "us"),
        parts.stream().map(PartitionInfo::name).sorted().collect(Collectors.toList()));
    assertEquals(Map.of("region", "eu"),
        parts.stream().filter(p -> p.name().equals("eu")).findFirst().orElseThrow().spec());

    try (Table t = conn.table(name);
        org.apache.arrow.vector.VectorSchemaRoot r = TestSupport.rows(alloc(),
            new Object[] {1L, "a", "eu"}, new Object[] {2L, "b", "eu"},
            new Object[] {3L, "c", "us"})) {
      t.append(r);
      t.flush();
    }
    Map<Integer, Long> earliest = admin.listOffsets(name, "eu", OffsetSpec.earliest());
    Map<Integer, Long> latest = admin.listOffsets(name, "eu", OffsetSpec.latest());
    assertEquals(2, earliest.size());
    assertEquals(0L, earliest.values().stream().mapToLong(Long::longValue).sum());
    // Two rows went to partition eu, spread over its two buckets.
    assertEquals(2L, latest.values().stream().mapToLong(Long::longValue).sum());
    Map<Integer, Long> one = admin.listOffsets(name, "us", List.of(1), OffsetSpec.latest());
    assertEquals(List.of(1), List.copyOf(one.keySet()));

    admin.dropPartition(name, Map.of("region", "us"), false);
    assertEquals(List.of("eu"),
        admin.listPartitions(name).stream().map(PartitionInfo::name).collect(Collectors.toList()));
    assertThrows(
        PartitionNotFoundException.class,
        () -> admin.dropPartition(name, Map.of("region", "us"), false));
  }

  @Test
  void badNamesAreInvalidArguments() {
    InvalidArgumentException e =
        assertThrows(InvalidArgumentException.class, () -> conn.table("no_dot_here"));
    assertTrue(e.getMessage().contains("no_dot_here"), e.getMessage());
    assertEquals(ErrorKind.INVALID_ARGUMENT, e.kind());
    assertThrows(NullPointerException.class, () -> conn.table(null));
  }
}
