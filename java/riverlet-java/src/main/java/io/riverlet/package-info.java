/**
 * Riverlet's Java API: an Arrow-native client for Apache Fluss over the Rust core (JNI).
 *
 * <p>Start with {@link io.riverlet.Riverlet#connect(String, java.util.Map)}, or embed a server
 * with {@link io.riverlet.LocalServer#start(java.nio.file.Path, int)}. Data crosses the boundary
 * as Arrow through the C Data Interface, without copies of column data.
 */
package io.riverlet;
