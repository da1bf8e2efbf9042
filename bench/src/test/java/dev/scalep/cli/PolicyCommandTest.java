package dev.scalep.cli;

import dev.scalep.policies.PolicyKey;
import dev.scalep.policies.PolicyKeys;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class PolicyCommandTest {
    static final Path CATALOG = Path.of("..", "policies", "catalog");

    record Result(int code, String out, String err) {
    }

    static synchronized Result run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.run(args);
            return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    static String cat(String name) {
        return CATALOG.resolve(name + ".yaml").toString();
    }

    @Test
    void checkAcceptsTheWholeCatalog() {
        List<String> files = List.of("mpi-everywhere", "2x-dynamic", "dynamic", "shared-dynamic", "static", "mpi-threads",
                "recommended-mlx5", "recommended-efa").stream().map(PolicyCommandTest::cat).toList();
        Result r = run(Stream.concat(Stream.of("policy", "check"), files.stream()).toArray(String[]::new));
        assertEquals(0, r.code(), r.err());
        for (String f : files) {
            assertTrue(r.out().contains("OK " + f), r.out());
        }
        assertEquals("", r.err());
        Result c = run("policy", "check", "catalog:recommended-efa");
        assertEquals(0, c.code(), c.err());
        assertTrue(c.out().startsWith("OK catalog:recommended-efa"), c.out());
    }

    @Test
    void checkReportsEveryErrorLocatedWithoutStackTrace(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "classes:\n  halo:\n    postlst: 32\n    inline: -4\n");
        Result r = run("policy", "check", cat("static"), bad.toString());
        assertEquals(2, r.code());
        assertTrue(r.out().contains("OK " + cat("static")), r.out());
        assertTrue(r.err().contains(bad + ":3:5: unknown key 'postlst' in class halo; did you mean 'postlist'?"), r.err());
        assertTrue(r.err().contains(bad + ":4:13: class halo: 'inline': -4 is out of range 0..4096"), r.err());
        assertTrue(r.err().contains("1 of 2 files invalid"), r.err());
        assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), r.err());
        Path bin = dir.resolve("bin.yaml");
        Files.write(bin, new byte[]{'c', 'l', (byte) 0xff, ':', '\n'});
        Result b = run("policy", "check", bin.toString());
        assertEquals(2, b.code());
        assertTrue(b.err().startsWith(bin + ":1:3: invalid UTF-8"), b.err());
        Result missing = run("policy", "check", dir.resolve("nope.yaml").toString());
        assertEquals(2, missing.code());
        assertTrue(missing.err().contains("nope.yaml:1:1: no such file"), missing.err());
    }

    @Test
    void unknownDeviceExitsTwoWithOneMessage() {
        Result noDevice = run("policy", "check", cat("static"), "--device", "no-such-device");
        assertEquals(2, noDevice.code());
        assertTrue(noDevice.err().startsWith("scalep policy check: no device named 'no-such-device'"), noDevice.err());
        assertFalse(noDevice.err().contains("\tat "));
    }

    @Test
    void userMistakesExitTwoWithOneMessage() {
        Result noClass = run("policy", "show", cat("recommended-mlx5"), "--class", "hallo");
        assertEquals(2, noClass.code());
        assertTrue(noClass.err().contains("no class 'hallo'") && noClass.err().contains("did you mean 'halo'?"), noClass.err());
        Result badCatalog = run("policy", "show", "catalog:statc");
        assertEquals(2, badCatalog.code());
        assertTrue(badCatalog.err().contains("did you mean 'static'?"), badCatalog.err());
        Result noArgs = run("policy", "check");
        assertEquals(2, noArgs.code(), "picocli usage error");
    }

    @Test
    void showPrintsEffectivePolicyAsYamlAndTable() {
        Result y = run("policy", "show", cat("recommended-mlx5"), "--class", "bulk");
        assertEquals(0, y.code(), y.err());
        assertTrue(y.out().contains("  bulk:\n"), y.out());
        assertFalse(y.out().contains("  halo:\n"), y.out());
        assertTrue(y.out().contains("    postlist: 32\n"), "inherited from halo:\n" + y.out());
        assertTrue(y.out().contains("qp=4way:combining"), y.out());
        assertTrue(y.out().contains("      refill-batch: 256\n"), y.out());
        Result t = run("policy", "show", cat("recommended-efa"), "--format", "table");
        assertEquals(0, t.code(), t.err());
        assertTrue(t.out().contains("SETTING"), t.out());
        assertTrue(t.out().contains("HALO") && t.out().contains("BULK"), t.out());
        assertTrue(t.out().lines().anyMatch(l -> l.startsWith("srd.ordering ") && l.contains("receiver-reorder") && l.contains("sender-wait")), t.out());
    }

    /** Every setting of the file format is a row of the table, by its dotted key. */
    @Test
    void showTableHasARowPerKey() {
        Result t = run("policy", "show", cat("recommended-mlx5"), "--format", "table", "--device", "sim:mlx5");
        assertEquals(0, t.code(), t.err());
        for (PolicyKey<?> k : PolicyKeys.CLASS) {
            if (k.isSetting()) {
                assertTrue(t.out().lines().anyMatch(l -> l.startsWith(k.path() + " ")), k.path() + "\n" + t.out());
            }
        }
        assertTrue(t.out().lines().anyMatch(l -> l.startsWith("connection.gid-index ") && l.contains("auto")), t.out());
    }

    /** The connection section meets the device's ports: a port or GID the device lacks is one line naming key, value and limit. */
    @Test
    void checkRefusesAPortOrGidTheDeviceLacks(@TempDir Path dir) throws Exception {
        for (String device : List.of("sim:mlx5", "sim:efa")) {
            int gids = Devices.byName(device).ports().getFirst().gids().size();
            Path port = dir.resolve("port.yaml");
            Files.writeString(port, "classes:\n  a:\n    connection: {port: 2}\n");
            Result r = run("policy", "check", port.toString(), "--device", device);
            assertEquals(2, r.code(), device + ": " + r.out());
            assertTrue(r.err().startsWith(port + ":3:24: class a: connection.port 2 does not exist: " + device
                    + " has port 1 only\n"), device + ": " + r.err());
            Path gid = dir.resolve("gid.yaml");
            Files.writeString(gid, "classes:\n  a:\n    on-unsupported: degrade\n    connection:\n      gid-index: 200\n");
            Result g = run("policy", "check", gid.toString(), "--device", device);
            assertEquals(2, g.code(), device + ": " + g.out());
            assertTrue(g.err().startsWith(gid + ":5:18: class a: connection.gid-index 200 is not in the GID table of "
                    + device + " port 1 (indices up to " + (gids - 1) + ": "), device + ": " + g.err());
            assertEquals(2, g.err().lines().count(), "one line per error, then the summary: " + g.err());
            Files.writeString(gid, "classes:\n  a:\n    connection: {gid-index: " + (gids - 1) + "}\n");
            Result ok = run("policy", "check", gid.toString(), "--device", device);
            assertEquals(0, ok.code(), device + ": the last index of the table is fine: " + ok.err());
            Result noDevice = run("policy", "check", port.toString());
            assertEquals(0, noDevice.code(), "without --device the port is not checked: " + noDevice.err());
        }
    }

    @Test
    void deviceValidationOnTheSimulatedDevices() {
        // the registry loads every provider; a broken one is a failure here, never a skip
        assertTrue(Devices.all().stream().anyMatch(d -> d.name().equals("sim:efa")), "sim:efa is registered");
        Result r = run("policy", "show", cat("recommended-mlx5"), "--device", "sim:efa");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("# degraded: class halo: inline 60 > device limit"), r.out());
        Result f = run("policy", "check", cat("recommended-efa"), "--device", "sim:efa");
        assertEquals(0, f.code(), f.err());
    }
}
