package org.ragway.opensearch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * A single-node OpenSearch cluster on 127.0.0.1 for ragway's backend tests.
 *
 * <p>Usage: {@code java -cp target/classes:target/lib/* org.ragway.opensearch.TestNode
 * --home DIR [--http-port N] [--port-file FILE]}. Port 0 picks a free port; the bound
 * HTTP port is written to the port file (write-to-temp + rename) once the node has
 * started, so a caller can wait for the file and then for cluster health. SIGTERM or
 * SIGINT closes the node cleanly.
 *
 * <p>This is the distribution's server without its launcher scripts: the modules ragway
 * uses (Netty4 HTTP and transport, analysis-common for the English stemmers, reindex for
 * _delete_by_query) are loaded from the classpath rather than from a modules/ folder. No security plugin is on the classpath,
 * so HTTP is plain and unauthenticated: for loopback tests only.
 */
public final class TestNode {

    /** Node's plugin-taking constructor is protected; this is all the subclass adds. */
    private static final class ClasspathPluginNode extends Node {
        ClasspathPluginNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    private TestNode() {}

    public static void main(String[] args) throws Exception {
        Path home = null;
        String httpPort = "0";
        Path portFile = null;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--home" -> { home = Path.of(require(args[i], value)); i++; }
                case "--http-port" -> { httpPort = require(args[i], value); i++; }
                case "--port-file" -> { portFile = Path.of(require(args[i], value)); i++; }
                default -> usage("unknown argument " + args[i]);
            }
        }
        if (home == null) {
            usage("--home is required");
        }
        home = home.toAbsolutePath();
        Files.createDirectories(home.resolve("data"));
        Files.createDirectories(home.resolve("logs"));
        Files.createDirectories(home.resolve("config"));

        Settings settings = Settings.builder()
            .put("cluster.name", "ragway-test")
            .put("node.name", "ragway-test-node")
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", httpPort)
            // Any free transport port: nothing else joins this cluster.
            .put("transport.port", "0")
            .put("http.type", "netty4")
            .put("transport.type", "netty4")
            // CI disks are small and often above the 85/90 % watermarks; with the
            // threshold on, new shards would stay unassigned.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", false)
            .build();

        LogConfigurator.registerErrorListener();
        LogConfigurator.configureWithoutConfig(settings);
        LogConfigurator.setNodeName("ragway-test-node");

        Environment environment = InternalSettingsPreparer.prepareEnvironment(
            settings, Collections.emptyMap(), home.resolve("config"), () -> "ragway-test-node");
        List<Class<? extends Plugin>> plugins =
            List.of(Netty4Plugin.class, CommonAnalysisPlugin.class, ReindexPlugin.class);
        Node node = new ClasspathPluginNode(environment, plugins);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (IOException | InterruptedException e) {
                System.err.println("error closing the node: " + e);
            } finally {
                stopped.countDown();
            }
        }, "ragway-test-node-shutdown"));

        node.start();
        int port = node.injector().getInstance(HttpServerTransport.class)
            .boundAddress().publishAddress().getPort();
        System.out.println("ragway-test-node: HTTP on http://127.0.0.1:" + port);
        if (portFile != null) {
            Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
            Files.writeString(tmp, Integer.toString(port), StandardCharsets.UTF_8);
            Files.move(tmp, portFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        stopped.await();
    }

    private static String require(String flag, String value) {
        if (value == null) {
            usage(flag + " needs a value");
        }
        return value;
    }

    private static void usage(String problem) {
        System.err.println("error: " + problem);
        System.err.println("usage: TestNode --home DIR [--http-port N] [--port-file FILE]");
        System.exit(2);
    }
}
