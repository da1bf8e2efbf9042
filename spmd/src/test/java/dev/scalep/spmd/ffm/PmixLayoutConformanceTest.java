package dev.scalep.spmd.ffm;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every PMIx struct size, alignment, field offset and size, constant and key that {@link PmixStructs}
 * declares, compared with the C compiler's view of the installed {@code pmix.h} (a program generated
 * from the Java entries, compiled with gcc and {@code pkg-config pmix}); without a compiler or the
 * header, compared with the checked-in golden file (OpenPMIx 4.2.2, x86_64).
 */
class PmixLayoutConformanceTest {
    private static final String GOLDEN = "/pmix-layout-x86_64-openpmix-4.2.txt";

    /** key -> {java value, C expression}. */
    private static Map<String, String[]> entries() throws IllegalAccessException {
        Map<String, String[]> m = new LinkedHashMap<>();
        Map<StructLayout, String> structs = new LinkedHashMap<>();
        structs.put(PmixStructs.PMIX_PROC, "pmix_proc_t");
        structs.put(PmixStructs.PMIX_BYTE_OBJECT, "pmix_byte_object_t");
        structs.put(PmixStructs.PMIX_VALUE, "pmix_value_t");
        structs.put(PmixStructs.PMIX_INFO, "pmix_info_t");
        for (var e : structs.entrySet()) {
            StructLayout s = e.getKey();
            String c = e.getValue();
            m.put("S " + c, new String[]{s.byteSize() + " " + s.byteAlignment(), "sizeof(" + c + "), _Alignof(" + c + ")"});
            for (MemoryLayout f : s.memberLayouts()) {
                if (f instanceof PaddingLayout) {
                    continue;
                }
                String n = f.name().orElseThrow();
                m.put("F " + c + " " + n, new String[]{s.byteOffset(groupElement(n)) + " " + f.byteSize(),
                        "offsetof(" + c + ", " + n + "), sizeof(((" + c + " *)0)->" + n + ")"});
            }
        }
        for (Field f : PmixStructs.class.getFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || !f.getName().startsWith("PMIX_")) {
                continue;
            }
            Object v = f.get(null);
            String cName = f.getName().equals("PMIX_BYTE_OBJECT_TYPE") ? "PMIX_BYTE_OBJECT" : f.getName();
            if (v instanceof String s) {
                m.put("K " + cName, new String[]{s, null});
            } else if (v instanceof Number num && !(v instanceof Long)) {
                m.put("C " + cName, new String[]{Integer.toString(num.intValue()), "(int)(" + cName + ")"});
            }
        }
        return m;
    }

    @Test
    void javaLayoutsMatchTheInstalledPmixHeaderOrTheGoldenFile() throws Exception {
        Map<String, String[]> java = entries();
        Map<String, String> ref = compile(java);
        String source = "gcc on the installed pmix.h";
        if (ref == null) {
            ref = golden();
            source = "the golden file (no compiler or pmix.h here)";
        } else if (System.getProperty("scalep.pmix.golden.write") != null) {
            StringBuilder g = new StringBuilder("# PMIx layouts and constants scalep uses: OpenPMIx 4.2.2, x86_64 (gcc on pmix.h)\n");
            ref.forEach((k, v) -> g.append(k).append(' ').append(v).append('\n'));
            Files.writeString(Path.of(System.getProperty("scalep.pmix.golden.write")), g);
        }
        List<String> problems = new ArrayList<>();
        for (var e : java.entrySet()) {
            String want = ref.get(e.getKey());
            if (!e.getValue()[0].equals(want)) {
                problems.add(e.getKey() + ": Java '" + e.getValue()[0] + "' vs '" + want + "'");
            }
        }
        if (!problems.isEmpty()) {
            fail("PMIx layout differences against " + source + ":\n  " + String.join("\n  ", problems));
        }
        assertTrue(java.size() >= 20, "entries checked: " + java.size());
        assertEquals(golden().keySet(), java.keySet(), "the golden file and the Java entries name the same facts");
    }

    private static Map<String, String> golden() throws Exception {
        Map<String, String> m = new LinkedHashMap<>();
        try (InputStream in = PmixLayoutConformanceTest.class.getResourceAsStream(GOLDEN)) {
            assertTrue(in != null, "golden file missing");
            for (String l : new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList()) {
                if (!l.isBlank() && !l.startsWith("#")) {
                    int cut = l.startsWith("F") ? nth(l, ' ', 3) : nth(l, ' ', 2);
                    m.put(l.substring(0, cut), l.substring(cut + 1));
                }
            }
        }
        return m;
    }

    private static int nth(String s, char c, int n) {
        int i = -1;
        for (int k = 0; k < n; k++) {
            i = s.indexOf(c, i + 1);
        }
        return i;
    }

    /** Compile and run the probe; null without gcc, pkg-config or the header. */
    private static Map<String, String> compile(Map<String, String[]> entries) throws Exception {
        Path gcc = Path.of("/usr/bin/gcc");
        if (!Files.isExecutable(gcc) || !Files.isExecutable(Path.of("/usr/bin/pkg-config"))) {
            return null;
        }
        String cflags = run(List.of("/usr/bin/pkg-config", "--cflags", "pmix"), false);
        if (cflags == null) {
            return null;
        }
        Path dir = Files.createTempDirectory("scalep-pmix-layout");
        try {
            StringBuilder c = new StringBuilder("#include <stddef.h>\n#include <stdio.h>\n#include <pmix.h>\nint main(void) {\n");
            for (var e : entries.entrySet()) {
                String k = e.getKey();
                if (k.startsWith("K ")) {
                    c.append("  printf(\"%s %s\\n\", \"").append(k).append("\", ").append(k.substring(2)).append(");\n");
                } else {
                    String fmt = k.startsWith("C ") ? " %d" : " %zu %zu";
                    c.append("  printf(\"").append(k).append(fmt).append("\\n\", ").append(e.getValue()[1]).append(");\n");
                }
            }
            c.append("  return 0;\n}\n");
            Path src = dir.resolve("probe.c");
            Path bin = dir.resolve("probe");
            Files.writeString(src, c);
            List<String> cmd = new ArrayList<>(List.of(gcc.toString(), "-std=gnu11", "-o", bin.toString(), src.toString()));
            cmd.addAll(List.of(cflags.strip().split("\\s+")));
            String out = run(cmd, true);
            if (!Files.isExecutable(bin)) {
                fail("compiling the PMIx layout probe failed:\n" + out);
            }
            Map<String, String> m = new LinkedHashMap<>();
            for (String l : run(List.of(bin.toString()), true).lines().toList()) {
                int cut = l.startsWith("F") ? nth(l, ' ', 3) : nth(l, ' ', 2);
                m.put(l.substring(0, cut), l.substring(cut + 1));
            }
            return m;
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Output of {@code cmd}; null when it fails and {@code mustSucceed} is false. */
    private static String run(List<String> cmd, boolean mustSucceed) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("timed out: " + cmd);
        }
        if (p.exitValue() != 0 && !mustSucceed) {
            return null;
        }
        return out;
    }
}
