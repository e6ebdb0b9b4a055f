package io.riverlet.flink;

import java.io.Serializable;
import java.util.Map;
import java.util.TreeMap;

import io.riverlet.Connection;
import io.riverlet.Riverlet;

/**
 * Where and how the runtime parts of a job (enumerator, readers, writers, lookup functions)
 * connect: the bootstrap servers, the client options and the table. Serializable, so it
 * travels inside the job graph; every task opens its own connection from it.
 */
public final class ConnectionSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String bootstrapServers;
    private final TreeMap<String, String> clientOptions;
    private final String database;
    private final String table;

    public ConnectionSpec(
            String bootstrapServers, Map<String, String> clientOptions, String database, String table) {
        this.bootstrapServers = bootstrapServers;
        this.clientOptions = new TreeMap<>(clientOptions);
        this.database = database;
        this.table = table;
    }

    /** {@code db.table}, the name the Java API takes. */
    public String tablePath() {
        return database + "." + table;
    }

    public String database() {
        return database;
    }

    public String table() {
        return table;
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** Opens a new connection; the caller closes it. */
    public Connection connect() {
        return Riverlet.connect(bootstrapServers, clientOptions);
    }

    @Override
    public String toString() {
        return tablePath() + "@" + bootstrapServers;
    }
}
