package dev.scalep.verbs.counters;

import dev.scalep.verbs.sim.ShmAccess;
import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counters file: what one process counts another reads through the file (as {@code scalep
 * stat} does), the file goes at close, a killed process's file is reclaimed by the next process
 * that creates one, and a link at a counters file's name is refused, never followed.
 */
@Timeout(120)
class CountersFileTest {
    private static String job() {
        return "ctr-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void aReaderSeesTheValuesAndTheFileGoesAtClose() throws Exception {
        Path dir = ShmAccess.userDir();
        String job = job();
        Path path;
        try (CountersFile f = CountersFile.create(dir, job, 64)) {
            path = f.path();
            assertEquals("stat-" + job + "@" + ProcessHandle.current().pid(), path.getFileName().toString());
            assertEquals(List.of(path), CountersFile.list(dir, job));
            AtomicCounter a = f.manager().newCounter("m1.ep0 wrs", Counters.TYPE_ENDPOINT);
            AtomicCounter b = f.manager().newCounter("qp7.locked doorbells", Counters.TYPE_QP);
            for (int i = 0; i < 1000; i++) {
                a.incrementOrdered();
            }
            b.getAndAddOrdered(31);
            f.describe(1, 2);
            CountersFile.Snapshot s = CountersFile.read(path);
            assertNotNull(s);
            assertTrue(s.alive());
            assertEquals(ProcessHandle.current().pid(), s.pid());
            assertEquals(1, s.rank());
            assertEquals(2, s.size());
            assertEquals(job, s.job());
            Map<String, Long> v = s.counters().stream()
                    .collect(Collectors.toMap(CountersFile.Counter::label, CountersFile.Counter::value));
            assertEquals(Map.of("m1.ep0 wrs", 1000L, "qp7.locked doorbells", 31L), v);
            assertEquals("m1.ep0", s.counters().getFirst().object());
            assertEquals("wrs", s.counters().getFirst().name());
            b.close(); // freed: the reader no longer lists it
            assertEquals(1, CountersFile.read(path).counters().size());
            assertEquals(0600, Files.getPosixFilePermissions(path).stream().mapToInt(p -> switch (p) {
                case OWNER_READ -> 0400;
                case OWNER_WRITE -> 0200;
                default -> 07000; // anything else fails the comparison
            }).sum());
        }
        assertFalse(Files.exists(path), "the file is removed at close");
        assertEquals(List.of(), CountersFile.list(dir, job));
    }

    @Test
    void aKilledProcessesFileIsReclaimedByTheNextOneAndOnlyItsOwn() throws Exception {
        Path dir = ShmAccess.userDir();
        String job = job();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Dscalep.job=" + job, "-cp",
                System.getProperty("java.class.path"), Child.class.getName())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Path childFile;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line = r.readLine();
            assertNotNull(line, "the child printed its file");
            childFile = Path.of(line);
            CountersFile.Snapshot live = CountersFile.read(childFile);
            assertTrue(live.alive());
            assertEquals(p.pid(), live.pid());
            assertEquals(42L, live.counters().getFirst().value());
            // a live process's file survives a reclaim
            CountersFile.reclaim(dir);
            assertTrue(Files.exists(childFile));
            p.destroyForcibly(); // SIGKILL: no shutdown hook runs
            p.waitFor();
        }
        assertTrue(Files.exists(childFile), "SIGKILL leaves the file");
        assertFalse(CountersFile.read(childFile).alive());
        try (CountersFile mine = CountersFile.create(dir, job(), 8)) {
            assertFalse(Files.exists(childFile), "the next create reclaimed the dead process's file");
            assertTrue(Files.exists(mine.path()));
        }
    }

    @Test
    void aLinkAtACountersFilesNameIsRefusedNotFollowed() throws Exception {
        Path dir = ShmAccess.userDir();
        String job = job();
        Path target = Files.createTempFile("ctr-target", ".txt");
        try {
            Files.writeString(target, "precious");
            Path link = dir.resolve("stat-" + job + "@" + ProcessHandle.current().pid());
            Files.createSymbolicLink(link, target);
            try {
                assertThrows(ShmAccess.Refused.class, () -> CountersFile.read(link));
                try (CountersFile f = CountersFile.create(dir, job, 8)) {
                    assertEquals(link.getFileName() + ".1", f.path().getFileName().toString(),
                            "the linked name is skipped for the next one");
                }
                assertTrue(Files.isSymbolicLink(link), "the link is left as it was");
                assertEquals("precious", Files.readString(target));
            } finally {
                Files.deleteIfExists(link);
            }
        } finally {
            Files.deleteIfExists(target);
        }
    }

    @Test
    void aGarbageFileIsAClearErrorForAReader() throws Exception {
        Path dir = ShmAccess.userDir();
        Path f = dir.resolve("stat-" + job() + "@1");
        Files.write(f, new byte[512]);
        try {
            Files.setPosixFilePermissions(f, EnumSet.of(PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE));
            assertEquals(null, CountersFile.read(f), "no magic yet: a file being created");
            Files.write(f, new byte[]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, StandardOpenOption.WRITE);
            IOException e = assertThrows(IOException.class, () -> CountersFile.read(f));
            assertTrue(e.getMessage().contains("not a scalep counters file"), e.getMessage());
        } finally {
            Files.deleteIfExists(f);
        }
    }

    /** A child process: creates its counters file through {@link Counters}, counts 42, prints the path, waits. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            CounterGroup g = Counters.group(Counters.TYPE_ENDPOINT, "m1.ep0", "wrs");
            g.counter(0).getAndAddOrdered(42);
            System.out.println(Counters.path());
            System.out.flush();
            Thread.sleep(120_000);
        }
    }
}
