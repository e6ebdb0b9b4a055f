package io.riverlet;

import java.util.Map;

/**
 * A database's description ({@link Admin#databaseInfo(String)}).
 *
 * @param name the database
 * @param comment its comment, or {@code null} when it has none
 * @param customProperties its custom properties
 * @param createdTimeMs when it was created (epoch ms)
 * @param modifiedTimeMs when it was last changed (epoch ms)
 */
public record DatabaseInfo(
    String name,
    String comment,
    Map<String, String> customProperties,
    long createdTimeMs,
    long modifiedTimeMs) {}
