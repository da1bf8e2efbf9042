package dev.scalep.policies;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(20)
class PolicyLoaderTest {
    static final Path CATALOG_DIR = Path.of("catalog");

    static List<String> catalog() {
        return PolicyLoader.CATALOG;
    }

    static PolicyException fails(String yaml) {
        return assertThrows(PolicyException.class, () -> PolicyLoader.parse("t.yaml", yaml));
    }

    static PolicyException fails(byte[] yaml) {
        return assertThrows(PolicyException.class, () -> PolicyLoader.parse("t.yaml", yaml));
    }

    /** Exactly one error, at line:column, whose message contains every fragment. */
    static void oneError(PolicyException e, int line, int column, String... fragments) {
        assertEquals(1, e.errors().size(), e.getMessage());
        PolicyError err = e.errors().get(0);
        assertEquals("t.yaml:" + line + ":" + column, err.where().toString(), e.getMessage());
        for (String f : fragments) {
            assertTrue(err.message().contains(f), "'" + f + "' not in: " + err);
        }
        assertTrue(e.getMessage().startsWith("t.yaml:" + line + ":" + column + ": "), e.getMessage());
    }

    @Test
    void catalogDirectoryMatchesTheCatalogListAndTheClassPathCopy() throws IOException {
        Set<String> files;
        try (Stream<Path> s = Files.list(CATALOG_DIR)) {
            files = s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
        Set<String> expected = PolicyLoader.CATALOG.stream().map(n -> n + ".yaml").collect(Collectors.toCollection(TreeSet::new));
        assertEquals(expected, files);
        for (String n : PolicyLoader.CATALOG) {
            try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.CATALOG_RESOURCE + n + ".yaml")) {
                assertNotNull(in, n);
                assertArrayEquals(Files.readAllBytes(CATALOG_DIR.resolve(n + ".yaml")), in.readAllBytes(), n);
            }
            String text = Files.readString(CATALOG_DIR.resolve(n + ".yaml"));
            assertTrue(text.startsWith("# " + n + ": "), n + " starts with a comment saying when to use it");
        }
    }

    @ParameterizedTest
    @MethodSource("catalog")
    void everyCatalogEntryLoadsAndValidates(String name) {
        Policy fromFile = PolicyLoader.load(CATALOG_DIR.resolve(name + ".yaml"));
        Policy fromClassPath = PolicyLoader.loadCatalog(name);
        assertEquals(fromFile.classes(), fromClassPath.classes());
        assertFalse(fromFile.classes().isEmpty());
        Category cat = Category.bySpelling(name);
        if (cat != null) {
            assertEquals(cat.config(), fromFile.endpointClass("default").sharing());
        }
        EffectivePolicy none = fromFile.effective();
        assertNull(none.device());
        assertTrue(none.degradations().isEmpty(), none.degradations().toString());
        if (!name.equals("recommended-efa")) {
            EffectivePolicy mlx = fromFile.effective("sim:mlx5", TestCaps.MLX5);
            assertTrue(mlx.degradations().isEmpty(), mlx.degradations().toString());
        }
        if (!name.equals("recommended-mlx5")) {
            EffectivePolicy efa = fromFile.effective("sim:efa", TestCaps.EFA);
            for (EndpointClass c : efa.classes().values()) {
                assertEquals(1, c.unsignaled(), "EFA v44 signals every WR");
                assertTrue(c.inlineThreshold() <= 32);
                assertEquals(TdMode.NONE, c.sharing().td());
            }
        }
        // what show prints loads again to the same effective classes
        Policy again = PolicyLoader.parse("shown.yaml", none.toYaml());
        assertEquals(none.classes(), again.classes());
    }

    @Test
    void recommendedMlx5HasDefaultsAndExtendsFilledIn() {
        Policy p = PolicyLoader.loadCatalog("recommended-mlx5");
        EndpointClass halo = p.endpointClass("halo");
        assertEquals(Category.TWO_X_DYNAMIC, halo.sharing().category());
        assertEquals(60, halo.inlineThreshold());
        assertEquals(1024, halo.srq().depth(), "default srq depth");
        EndpointClass bulk = p.endpointClass("bulk");
        assertEquals(32, bulk.postlist(), "inherited from halo");
        assertEquals(0, bulk.inlineThreshold());
        assertEquals(Share.ways(4), bulk.sharing().qp());
        assertEquals(QpMode.COMBINING, bulk.sharing().qpMode());
        assertEquals(new CqSettings(8192, 16, 8), bulk.cq());
        assertEquals(new SrqSettings(4096, 1024, 256), bulk.srq());
        assertNotNull(p.origin("bulk", "postlist"));
        assertEquals(p.origin("halo", "postlist"), p.origin("bulk", "postlist"), "inherited origin points into the parent");
        assertNull(p.origin("halo", "sge-header-payload"));
        assertThrows(IllegalArgumentException.class, () -> p.endpointClass("hallo"));
    }

    @Test
    void minimalClassGetsEveryDefault() {
        Policy p = PolicyLoader.parse("t.yaml", "classes:\n  x: {}\n");
        assertEquals(EndpointClass.defaults("x"), p.endpointClass("x"));
        EndpointClass d = p.endpointClass("x");
        assertEquals(32, d.postlist());
        assertEquals(64, d.unsignaled());
        assertEquals(512, d.cq().depth(), "a per-QP CQ holds its send queue and receive slots");
        assertEquals(256, d.srq().refillThreshold());
        assertEquals(OnUnsupported.DEGRADE, d.onUnsupported());
        assertEquals(Category.STATIC.config(), d.sharing());
        Policy derived = PolicyLoader.parse("t.yaml", "classes:\n  x: {queue-depth: 64, postlist: 8, srq: {depth: 100}}\n");
        EndpointClass x = derived.endpointClass("x");
        assertEquals(128, x.cq().depth(), "cq.depth defaults to what the queues need");
        assertEquals(5 * 64, PolicyLoader.parse("t.yaml", "classes:\n  x: {queue-depth: 64, sharing: \"ctx=shared,qp=4way:locked,cq=4way\"}\n")
                .endpointClass("x").cq().depth(), "one QP of 4 threads and their receive slots");
        assertEquals(8, x.chained().maxLength(), "chained.max-length defaults to postlist");
        assertEquals(new SrqSettings(100, 25, 64), x.srq());
    }

    @Test
    void wrongTypes() {
        PolicyException e = fails("classes:\n  halo:\n    postlist: \"32\"\n    blueflame: true\n    chained: yes\n    sharing: 4\n");
        assertEquals(4, e.errors().size(), e.getMessage());
        assertEquals("t.yaml:3:15", e.errors().get(0).where().toString());
        assertTrue(e.errors().get(0).message().contains("must be an integer in range 1..4096, not the string '32'"));
        assertTrue(e.errors().get(1).message().contains("blueflame' must be one of on, off, auto, not the boolean true"));
        assertEquals("t.yaml:5:14", e.errors().get(2).where().toString());
        assertTrue(e.errors().get(2).message().contains("must be a mapping"), e.getMessage());
        assertTrue(e.errors().get(3).message().contains("must be a category"), e.getMessage());
        oneError(fails("classes:\n  a:\n    inline: 1.5\n"), 3, 13, "not the number 1.5");
        oneError(fails("classes:\n  a:\n    postlist:\n"), 3, 14, "null");
        oneError(fails("classes:\n  a:\n    postlist: [1, 2]\n"), 3, 15, "not a sequence");
        oneError(fails("classes: [a, b]\n"), 1, 10, "'classes' must be a mapping");
        oneError(fails("- a\n- b\n"), 1, 1, "must be a mapping");
        oneError(fails("classes:\n  a: 3\n"), 2, 6, "class a must be a mapping");
        oneError(fails("classes:\n  a:\n    postlist: !!python/object:os.system 3\n"), 3, 15, "tagged");
    }

    @Test
    void unknownKeysSuggestTheNearestKey() {
        oneError(fails("classes:\n  halo:\n    postlst: 32\n"), 3, 5, "unknown key 'postlst' in class halo",
                "did you mean 'postlist'?", "allowed: extends");
        oneError(fails("classes:\n  halo:\n    cq:\n      moderaton: {count: 1}\n"), 4, 7, "'cq.moderaton'",
                "did you mean 'moderation'?");
        PolicyException top = fails("clases:\n  a: {}\n");
        assertEquals(2, top.errors().size(), "unknown key and missing classes");
        assertTrue(top.errors().get(0).message().contains("did you mean 'classes'?"), top.getMessage());
        oneError(fails("classes:\n  a: {blueflame: offf}\n"), 2, 18, "did you mean 'off'?");
        oneError(fails("classes:\n  a: {sharing: dynamc}\n"), 2, 16, "did you mean 'dynamic'?");
        oneError(fails("classes:\n  a: {zzzzzzzz: 1}\n"), 2, 7, "unknown key 'zzzzzzzz'");
        assertFalse(fails("classes:\n  a: {zzzzzzzz: 1}\n").getMessage().contains("did you mean"));
    }

    @Test
    void hugeAndOutOfRangeNumbers() {
        oneError(fails("classes:\n  a:\n    postlist: 99999999999999999999999999\n"), 3, 15, "out of range 1..4096");
        oneError(fails("classes:\n  a:\n    unsignaled: 0\n"), 3, 17, "out of range 1..65536");
        oneError(fails("classes:\n  a:\n    inline: -1\n"), 3, 13, "out of range 0..4096");
        oneError(fails("classes:\n  a:\n    queue-depth: " + "9".repeat(5000) + "\n"), 3, 18, "not a number", "...");
        oneError(fails("version: 2\nclasses:\n  a: {}\n"), 1, 10, "out of range 1..1");
    }

    @Test
    void duplicateKeys() {
        oneError(fails("classes:\n  a:\n    postlist: 1\n    postlist: 2\n"), 4, 5, "duplicate key 'postlist'", "line 3");
        oneError(fails("classes:\n  a: {}\n  a: {}\n"), 3, 3, "duplicate key 'a'");
    }

    @Test
    void extendsCyclesAndUnknownParents() {
        PolicyException e = fails("classes:\n  a: {extends: b}\n  b: {extends: c}\n  c: {extends: a}\n  d: {extends: a}\n");
        assertTrue(e.getMessage().contains("extends cycle a -> b -> c -> a"), e.getMessage());
        assertTrue(e.errors().get(0).where().line() >= 2);
        oneError(fails("classes:\n  a: {extends: a}\n"), 2, 16, "extends cycle a -> a");
        oneError(fails("classes:\n  halo: {}\n  b: {extends: hallo}\n"), 3, 16, "unknown class 'hallo'", "did you mean 'halo'?");
    }

    @Test
    void smallAliasUseLoads() {
        Policy p = PolicyLoader.parse("t.yaml", "classes:\n  a: &f {postlist: 8}\n  b: *f\n");
        assertEquals(8, p.endpointClass("b").postlist());
    }

    @Test
    void aliasBombIsRejectedFast() {
        StringBuilder sb = new StringBuilder("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < 30; i++) {
            sb.append("a").append(i).append(": &a").append(i).append(" [");
            for (int j = 0; j < 9; j++) {
                sb.append(j == 0 ? "" : ", ").append("*a").append(i - 1);
            }
            sb.append("]\n");
        }
        sb.append("classes:\n  a: {}\n");
        // bounded work, not time: the bomb expands to 9^30 nodes; the loader stops within the text's own events
        int[] events = new int[1];
        PolicyException e = assertThrows(PolicyException.class,
                () -> PolicyLoader.parse("t.yaml", sb.toString().getBytes(StandardCharsets.UTF_8), events));
        assertTrue(events[0] > 0 && events[0] <= sb.length(), "events read: " + events[0] + " for " + sb.length() + " bytes");
        assertTrue(e.getMessage().contains("too many aliases"), e.getMessage());
        assertTrue(e.errors().get(0).where().line() >= 2, e.getMessage());
    }

    @Test
    void deepNestingIsRejected() {
        String deep = "classes:\n  a:\n    srq: " + "[".repeat(100_000) + "\n";
        PolicyException e = fails(deep);
        oneError(e, 3, 10 + PolicyLoader.MAX_DEPTH - 3, "nesting deeper than " + PolicyLoader.MAX_DEPTH);
        String block = new StringBuilder("classes:\n").append(Stream.iterate(1, i -> i + 1).limit(40)
                .map(i -> "  ".repeat(i) + "k" + i + ":\n").collect(Collectors.joining())).toString();
        assertTrue(fails(block).getMessage().contains("nesting deeper"));
    }

    @Test
    void nonUtf8IsLocated() {
        byte[] b = "classes:\n  a:\n    postlist: 3\u00e9X\n".getBytes(StandardCharsets.UTF_8);
        byte[] bad = new byte[b.length - 1];
        // drop the continuation byte of é: 0xC3 followed by 'X'
        int i = new String(b, StandardCharsets.ISO_8859_1).indexOf('\u00c3');
        System.arraycopy(b, 0, bad, 0, i + 1);
        System.arraycopy(b, i + 2, bad, i + 1, b.length - i - 2);
        oneError(fails(bad), 3, 16, "invalid UTF-8", "0xc3");
        oneError(fails(new byte[]{(byte) 0xff, (byte) 0xfe, 'a', 0}), 1, 1, "UTF-16");
        oneError(fails("classes:\n  a: {}\u0000\n".getBytes(StandardCharsets.UTF_8)), 2, 8, "U+0000");
        Policy bom = PolicyLoader.parse("t.yaml", ("\ufeffclasses:\n  a: {}\n").getBytes(StandardCharsets.UTF_8));
        assertNotNull(bom.endpointClass("a"));
    }

    @Test
    void truncatedAndMalformedYaml() {
        oneError(fails("classes:\n  a: {postlist: 3\n"), 3, 1, "YAML syntax");
        oneError(fails("classes:\n  a:\n    postlist: \"unterminated\n"), 4, 1, "YAML syntax");
        assertTrue(fails("classes:\n  a: {}\n---\nclasses:\n  b: {}\n").getMessage().contains("single document"));
        oneError(fails(""), 1, 1, "empty policy");
        oneError(fails("# only a comment\n"), 1, 1, "empty policy");
        oneError(fails("version: 1\n"), 1, 1, "missing 'classes'");
        oneError(fails("classes: {}\n"), 1, 10, "'classes' is empty");
    }

    @Test
    void sizeLimit() {
        byte[] big = new byte[PolicyLoader.MAX_BYTES + 1];
        Arrays.fill(big, (byte) '#');
        oneError(fails(big), 1, 1, "larger than");
    }

    @Test
    void badSharingIsLocatedAtTheToken() {
        oneError(fails("classes:\n  a:\n    sharing: ctx=shared,qp=4wy\n"), 3, 25, "token 2 'qp=4wy'", "allowed");
        oneError(fails("classes:\n  a:\n    sharing: \"ctx=shared,qp=4wy\"\n"), 3, 26, "token 2");
        oneError(fails("classes:\n  a:\n    sharing: qp=2way,pd=per-thread\n"), 3, 14, "inconsistent sharing level");
    }

    @Test
    void crossFieldRules() {
        oneError(fails("classes:\n  a: {srq: {depth: 8, refill-threshold: 9}}\n"), 2, 41, "srq.refill-threshold 9 > srq.depth 8");
        oneError(fails("classes:\n  a: {chained: {pool: 4, max-length: 8}}\n"), 2, 38, "chained.max-length 8 > chained.pool 4");
        oneError(fails("classes:\n  a: {cq: {depth: 4, moderation: {count: 5}}}\n"), 2, 42, "cq.moderation.count 5 > cq.depth 4");
    }

    @Test
    void allErrorsAreCollected() {
        PolicyException e = fails("classes:\n  a:\n    postlist: 0\n    inline: x\n  b:\n    unsignaled: -3\n    bogus: 1\n  c: {extends: zz}\n");
        assertEquals(5, e.errors().size(), e.getMessage());
        for (PolicyError err : e.errors()) {
            assertTrue(err.toString().matches("t\\.yaml:\\d+:\\d+: .+"), err.toString());
        }
        List<Integer> lines = e.errors().stream().map(x -> x.where().line()).toList();
        assertEquals(List.of(3, 4, 6, 7, 8), lines);
    }

    @Test
    void missingFileAndCatalogName() {
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.load(Path.of("no/such.yaml")));
        assertTrue(e.getMessage().startsWith("no/such.yaml:1:1: no such file"), e.getMessage());
        IllegalArgumentException c = assertThrows(IllegalArgumentException.class, () -> PolicyLoader.loadCatalog("statc"));
        assertTrue(c.getMessage().contains("did you mean 'static'?"), c.getMessage());
    }
}
