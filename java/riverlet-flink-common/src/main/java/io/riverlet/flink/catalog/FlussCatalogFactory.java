package io.riverlet.flink.catalog;

import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import io.riverlet.flink.FlussOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.factories.CatalogFactory;

/** {@code CREATE CATALOG c WITH ('type' = 'fluss', 'bootstrap.servers' = ...)}. */
public class FlussCatalogFactory implements CatalogFactory {

    @Override
    public String factoryIdentifier() {
        return FlussOptions.IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Collections.singleton(FlussOptions.BOOTSTRAP_SERVERS);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        Set<ConfigOption<?>> s = new HashSet<>();
        s.add(FlussOptions.DEFAULT_DATABASE);
        return s;
    }

    @Override
    public Catalog createCatalog(Context context) {
        Map<String, String> options = context.getOptions();
        Configuration config = Configuration.fromMap(options);
        String bootstrap = config.get(FlussOptions.BOOTSTRAP_SERVERS);
        if (bootstrap == null || bootstrap.trim().isEmpty()) {
            throw new ValidationException("catalog '" + context.getName()
                    + "' needs the option 'bootstrap.servers'");
        }
        return new FlussCatalog(
                context.getName(),
                config.get(FlussOptions.DEFAULT_DATABASE),
                bootstrap,
                FlussOptions.clientOptions(options));
    }
}
