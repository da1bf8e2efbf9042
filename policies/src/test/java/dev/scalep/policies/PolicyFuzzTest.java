package dev.scalep.policies;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Random mutations and truncations of the catalog: every input loads (and validates) or fails with
 * a PolicyException whose every error is {@code file:line:column: message}; nothing else escapes,
 * and no input makes the loader do more than linear work (YAML events read, bounded by the input's
 * length and by {@link PolicyLoader#MAX_EVENTS}; no wall-clock limit).
 */
class PolicyFuzzTest {
    static final Pattern LOCATED = Pattern.compile("fuzz\\.yaml:[1-9]\\d*:[1-9]\\d*: \\S.*", Pattern.DOTALL);
    static final String[] SNIPPETS = {"&a ", "*a", "[", "]", "{", "}", ": ", "- ", "\n", "  ", "\t", "\"", "'", "!!int ",
            "!!binary ", "? ", "|\n", ">\n", "#", ",", "99999999999999999999", "-1", "1.5e300", "null", "~", "true",
            "\u00e9", "\u0000", "\ufeff", "---\n", "...\n", "<<: *a\n", "%YAML 1.2\n", "extends: default\n", "%TAG ! tag:x,2000:\n",
            "sharing: \"qp=4way:locked\"\n", "x=1,", "\\u0041", "\r\n"};

    @Test
    @Timeout(120)
    void mutationsLoadOrFailWithLocatedErrors() throws Exception {
        List<byte[]> seeds = new ArrayList<>();
        for (String n : PolicyLoader.CATALOG) {
            seeds.add(Files.readAllBytes(Path.of("catalog", n + ".yaml")));
        }
        SplittableRandom rnd = new SplittableRandom(0x5ca1ab1eL);
        int iterations = 0;
        int loaded = 0;
        int rejected = 0;
        int[] events = new int[1];
        for (; iterations < 4000; iterations++) {
            byte[] input = mutate(seeds.get(rnd.nextInt(seeds.size())), rnd);
            try {
                Policy p = PolicyLoader.parse("fuzz.yaml", input, events);
                loaded++;
                try {
                    p.effective("sim:efa", TestCaps.EFA);
                    p.effective("sim:mlx5", TestCaps.MLX5);
                } catch (PolicyException e) {
                    checkLocated(e, input);
                }
            } catch (PolicyException e) {
                rejected++;
                checkLocated(e, input);
            } catch (Throwable t) {
                fail("input " + iterations + " threw " + t + " for:\n" + new String(input, StandardCharsets.ISO_8859_1), t);
            }
            assertTrue(events[0] <= 2L * input.length + 8 && events[0] <= PolicyLoader.MAX_EVENTS + 1,
                    "input " + iterations + ": " + events[0] + " events for " + input.length + " bytes");
        }
        assertTrue(loaded > 0 && rejected > 0, "loaded " + loaded + ", rejected " + rejected);
    }

    static void checkLocated(PolicyException e, byte[] input) {
        assertFalse(e.errors().isEmpty());
        for (PolicyError err : e.errors()) {
            assertTrue(LOCATED.matcher(err.toString()).matches(), "unlocated error: " + err);
            assertTrue(err.where().line() <= count(input) + 2, "line beyond the input: " + err);
        }
    }

    static int count(byte[] b) {
        int n = 1;
        for (byte x : b) {
            if (x == '\n' || x == '\r') {
                n++;
            }
        }
        return n;
    }

    static byte[] mutate(byte[] seed, SplittableRandom rnd) {
        byte[] b = seed.clone();
        int ops = 1 + rnd.nextInt(4);
        for (int i = 0; i < ops; i++) {
            int kind = rnd.nextInt(6);
            int at = b.length == 0 ? 0 : rnd.nextInt(b.length);
            switch (kind) {
                case 0 -> b = Arrays.copyOf(b, at); // truncate
                case 1 -> { // flip a byte
                    if (b.length > 0) {
                        b[at] = (byte) rnd.nextInt(256);
                    }
                }
                case 2 -> { // delete a range
                    int len = Math.min(b.length - at, 1 + rnd.nextInt(16));
                    byte[] n = new byte[b.length - len];
                    System.arraycopy(b, 0, n, 0, at);
                    System.arraycopy(b, at + len, n, at, b.length - at - len);
                    b = n;
                }
                case 3, 4 -> { // insert a snippet
                    byte[] s = SNIPPETS[rnd.nextInt(SNIPPETS.length)].getBytes(StandardCharsets.UTF_8);
                    byte[] n = new byte[b.length + s.length];
                    System.arraycopy(b, 0, n, 0, at);
                    System.arraycopy(s, 0, n, at, s.length);
                    System.arraycopy(b, at, n, at + s.length, b.length - at);
                    b = n;
                }
                default -> { // duplicate a line-sized chunk
                    int len = Math.min(b.length - at, rnd.nextInt(40));
                    byte[] n = new byte[b.length + len];
                    System.arraycopy(b, 0, n, 0, at + len);
                    System.arraycopy(b, at, n, at + len, b.length - at);
                    b = n;
                }
            }
        }
        return b;
    }
}
