package io.riverlet;

/**
 * A server option as {@link Admin#describeClusterConfigs()} reports it (Fluss's
 * DescribeClusterConfigs).
 *
 * @param key the option's name ({@code kv.snapshot.interval})
 * @param value its value, or {@code null} when unset (secrets are reported as {@code <hidden>})
 * @param source where the value comes from: {@code INITIAL_SERVER_CONFIG} (the server's start-up
 *     options) or {@code DYNAMIC_SERVER_CONFIG} (changed while it runs)
 */
public record ConfigEntry(String key, String value, String source) {}
