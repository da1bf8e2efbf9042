package dev.scalep.verbs.ffm;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every struct size, alignment, field offset/size and constant the Java layer uses, compared with
 * the C compiler's view of the installed {@code infiniband/verbs.h}, {@code efadv.h} and
 * {@code mlx5dv.h} (a C program generated from the Java entries, compiled with gcc at test time).
 * Where no compiler or headers exist, the entries are compared with the checked-in golden file
 * (rdma-core v44, x86_64). Either way every golden entry must be covered by a Java layout.
 */
class LayoutConformanceTest {
    private static final String GOLDEN = "/verbs-layout-x86_64-rdma-core-44.txt";
    private static final String[] HEADERS = {"infiniband/verbs.h", "infiniband/efadv.h", "infiniband/mlx5dv.h"};

    /** Nested field paths checked beyond the top-level members (besides those the golden file names). */
    private static final String[][] EXTRA_PATHS = {
            {"ibv_ah_attr", "grh.dgid"}, {"ibv_ah_attr", "grh.sgid_index"}, {"ibv_ah_attr", "grh.hop_limit"}, {"ibv_ah_attr", "grh.traffic_class"},
            {"ibv_srq_init_attr", "attr.max_wr"}, {"ibv_srq_init_attr", "attr.max_sge"},
            {"ibv_context", "ops.post_srq_recv"}, {"ibv_async_event", "element.cq"},
            {"ibv_async_event", "element.qp"}, {"ibv_async_event", "element.srq"},
            {"ibv_async_event", "element.port_num"}};

    private static Map<String, StructLayout> structs() {
        Map<String, StructLayout> m = new LinkedHashMap<>();
        for (StructLayout s : List.of(Structs.IBV_SGE, Structs.IBV_SEND_WR, Structs.IBV_RECV_WR, Structs.IBV_WC,
                IbvStructs.IBV_QP_CAP, IbvStructs.IBV_QP_INIT_ATTR, IbvStructs.IBV_QP_INIT_ATTR_EX, IbvStructs.IBV_GID_ENTRY,
                IbvStructs.IBV_GLOBAL_ROUTE, IbvStructs.IBV_AH_ATTR, IbvStructs.IBV_QP_ATTR,
                IbvStructs.IBV_CQ_INIT_ATTR_EX, IbvStructs.IBV_TD_INIT_ATTR, IbvStructs.IBV_TD,
                IbvStructs.IBV_PARENT_DOMAIN_INIT_ATTR, IbvStructs.IBV_DEVICE_ATTR, IbvStructs.IBV_DEVICE_ATTR_EX,
                IbvStructs.IBV_PORT_ATTR, IbvStructs.IBV_MR, IbvStructs.IBV_PD, IbvStructs.IBV_CQ, IbvStructs.IBV_SRQ,
                IbvStructs.IBV_SRQ_ATTR, IbvStructs.IBV_SRQ_INIT_ATTR, IbvStructs.IBV_COMP_CHANNEL, IbvStructs.IBV_AH,
                IbvStructs.IBV_QP, IbvStructs.IBV_CONTEXT_OPS, IbvStructs.IBV_CONTEXT, IbvStructs.VERBS_CONTEXT,
                IbvStructs.IBV_ASYNC_EVENT,
                IbvStructs.IBV_QP_EX, IbvStructs.IBV_CQ_EX, IbvStructs.IBV_POLL_CQ_ATTR,
                IbvStructs.IBV_MODIFY_CQ_ATTR, IbvStructs.EFADV_QP_INIT_ATTR,
                IbvStructs.EFADV_DEVICE_ATTR, IbvStructs.EFADV_CQ_INIT_ATTR, IbvStructs.EFADV_AH_ATTR,
                IbvStructs.MLX5DV_DEVX_UAR, IbvStructs.MLX5DV_CONTEXT_ATTR, IbvStructs.MLX5DV_QP_INIT_ATTR)) {
            m.put(s.name().orElseThrow(), s);
        }
        return m;
    }

    /** Constants by C name, from the public enums and {@link IbvConst}. */
    private static Map<String, Long> constants() throws IllegalAccessException {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Opcode o : Opcode.values()) {
            m.put("IBV_WR_" + o.name(), (long) o.code);
        }
        m.put("IBV_SEND_FENCE", (long) SendFlags.FENCE);
        m.put("IBV_SEND_SIGNALED", (long) SendFlags.SIGNALED);
        m.put("IBV_SEND_SOLICITED", (long) SendFlags.SOLICITED);
        m.put("IBV_SEND_INLINE", (long) SendFlags.INLINE);
        for (Field f : WcStatus.class.getFields()) {
            m.put("IBV_WC_" + f.getName(), ((Number) f.get(null)).longValue());
        }
        for (Field f : WcOpcode.class.getFields()) {
            m.put("IBV_WC_" + f.getName(), ((Number) f.get(null)).longValue());
        }
        for (QpState s : QpState.values()) {
            m.put("IBV_QPS_" + s.name(), (long) s.code);
        }
        m.put("IBV_QPT_RC", (long) QpType.RC.code);
        m.put("IBV_QPT_UD", (long) QpType.UD.code);
        m.put("IBV_QPT_DRIVER", (long) QpType.SRD.code);
        m.put("IBV_ACCESS_LOCAL_WRITE", (long) Access.LOCAL_WRITE);
        m.put("IBV_ACCESS_REMOTE_WRITE", (long) Access.REMOTE_WRITE);
        m.put("IBV_ACCESS_REMOTE_READ", (long) Access.REMOTE_READ);
        m.put("IBV_ACCESS_REMOTE_ATOMIC", (long) Access.REMOTE_ATOMIC);
        m.put("IBV_WC_WITH_IMM", (long) Structs.IBV_WC_WITH_IMM);
        for (Field f : dev.scalep.verbs.AsyncEvent.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                m.put("IBV_EVENT_" + f.getName(), ((Number) f.get(null)).longValue());
            }
        }
        for (Field f : IbvConst.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getName().startsWith("IBV_")
                    || f.getName().startsWith("EFADV_") || f.getName().startsWith("MLX5DV_")) {
                m.put(f.getName(), ((Number) f.get(null)).longValue());
            }
        }
        m.put("__VERBS_ABI_IS_EXTENDED", IbvConst.VERBS_ABI_IS_EXTENDED);
        return m;
    }

    /** One checked fact: key (what the C program prints before the numbers) and its numbers. */
    record Entry(String key, long[] values, String cExpr) {
    }

    private static List<Entry> javaEntries(List<String> goldenNestedPaths) throws IllegalAccessException {
        List<Entry> out = new ArrayList<>();
        Map<String, StructLayout> structs = structs();
        for (Map.Entry<String, StructLayout> e : structs.entrySet()) {
            String name = e.getKey();
            StructLayout s = e.getValue();
            String ctype = "struct " + name;
            out.add(new Entry("S " + name, new long[]{s.byteSize(), s.byteAlignment()},
                    "(long long)sizeof(" + ctype + "), (long long)_Alignof(" + ctype + ")"));
            List<String> paths = new ArrayList<>();
            topLevel(s, "", paths);
            for (String g : goldenNestedPaths) {
                String[] p = g.split(" ", 2);
                if (p[0].equals(name) && !paths.stream().map(LayoutConformanceTest::cPath).toList().contains(p[1])) {
                    paths.add(p[1]);
                }
            }
            for (String[] x : EXTRA_PATHS) {
                if (x[0].equals(name) && !paths.contains(x[1])) {
                    paths.add(x[1]);
                }
            }
            for (String path : paths) {
                MemoryLayout.PathElement[] pe = Arrays.stream(path.split("\\."))
                        .map(MemoryLayout.PathElement::groupElement).toArray(MemoryLayout.PathElement[]::new);
                long off = s.byteOffset(pe);
                long size = s.select(pe).byteSize();
                String cpath = cPath(path).replace("dgid.", "dgid.global.");
                String offExpr = "(long long)offsetof(" + ctype + ", " + cpath + ")";
                String sizeExpr = "(long long)sizeof(((" + ctype + " *)0)->" + cpath + ")";
                out.add(new Entry("F " + name + " " + cPath(path), new long[]{off, size}, offExpr + ", " + sizeExpr));
                if (name.equals("verbs_context") && !path.equals("context")) {
                    long rel = off - s.byteOffset(groupElement("context"));
                    out.add(new Entry("F " + name + " " + cPath(path) + " rel_to_ibv_context",
                            new long[]{off, size, rel}, offExpr + ", " + sizeExpr + ", " + offExpr
                            + " - (long long)offsetof(struct verbs_context, context)"));
                }
            }
        }
        for (Map.Entry<String, Long> c : constants().entrySet()) {
            out.add(new Entry("C " + c.getKey(), new long[]{c.getValue()},
                    "(long long)(uintptr_t)(" + c.getKey() + ")"));
        }
        return out;
    }

    /** Named members, descending into {@code anon_*} groups as C does into anonymous unions. */
    private static void topLevel(GroupLayout g, String prefix, List<String> out) {
        for (MemoryLayout m : g.memberLayouts()) {
            if (m instanceof PaddingLayout || m.name().isEmpty()) {
                continue;
            }
            String n = m.name().get();
            if (n.startsWith("anon_") && m instanceof GroupLayout inner) {
                topLevel(inner, prefix + n + ".", out);
            } else {
                out.add(prefix + n);
            }
        }
    }

    /** The C member path of a Java layout path: anonymous-union groups vanish. */
    private static String cPath(String javaPath) {
        return Arrays.stream(javaPath.split("\\.")).filter(p -> !p.startsWith("anon_"))
                .reduce((a, b) -> a + "." + b).orElseThrow();
    }

    /** Golden lines as key → numbers (the field key includes the relative-offset marker). */
    private static Map<String, long[]> parse(List<String> lines) {
        Map<String, long[]> m = new LinkedHashMap<>();
        for (String line : lines) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] t = line.split("\\s+");
            switch (t[0]) {
                case "S" -> m.put("S " + t[1], new long[]{num(t[2]), num(t[3])});
                case "F" -> {
                    if (t.length == 7) {
                        m.put("F " + t[1] + " " + t[2] + " " + t[5], new long[]{num(t[3]), num(t[4]), num(t[6])});
                    } else {
                        m.put("F " + t[1] + " " + t[2], new long[]{num(t[3]), num(t[4])});
                    }
                }
                case "C" -> m.put("C " + t[1], new long[]{num(t[2])});
                default -> fail("unparseable layout line: " + line);
            }
        }
        return m;
    }

    private static long num(String s) {
        return s.startsWith("0x") ? Long.parseUnsignedLong(s.substring(2), 16) : Long.parseLong(s);
    }

    private static List<String> golden() throws IOException {
        try (InputStream in = LayoutConformanceTest.class.getResourceAsStream(GOLDEN)) {
            assertTrue(in != null, "golden layout file missing from test resources");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }

    private static List<String> goldenNested(Map<String, long[]> golden) {
        List<String> out = new ArrayList<>();
        for (String k : golden.keySet()) {
            String[] t = k.split(" ");
            if (t[0].equals("F") && t[2].contains(".")) {
                out.add(t[1] + " " + t[2]);
            }
        }
        return out;
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void javaLayoutsMatchTheInstalledHeadersOrTheGoldenFile() throws Exception {
        Map<String, long[]> golden = parse(golden());
        List<Entry> entries = javaEntries(goldenNested(golden));
        Map<String, long[]> javaValues = new LinkedHashMap<>();
        for (Entry e : entries) {
            javaValues.put(e.key(), e.values());
        }
        List<String> problems = new ArrayList<>();
        for (String k : golden.keySet()) {
            if (!javaValues.containsKey(k)) {
                problems.add("no Java layout for golden entry: " + k);
            }
        }
        Map<String, long[]> reference;
        String source;
        Path gcc = findCompiler();
        if (gcc != null && headersPresent(gcc)) {
            reference = compileAndRun(gcc, entries);
            source = "gcc on the installed headers";
        } else {
            reference = golden;
            source = "the golden file (no compiler or headers here)";
        }
        for (Entry e : entries) {
            long[] ref = reference.get(e.key());
            if (ref == null) {
                if (reference != golden) {
                    problems.add("C program printed nothing for " + e.key());
                }
                continue;
            }
            if (!Arrays.equals(ref, e.values())) {
                problems.add(e.key() + ": Java " + Arrays.toString(e.values()) + " vs "
                        + Arrays.toString(ref));
            }
        }
        if (!problems.isEmpty()) {
            fail("layout differences against " + source + ":\n  " + String.join("\n  ", problems));
        }
        assertTrue(entries.size() >= golden.size(), "fewer Java entries than golden ones");
    }

    @Test
    void derivedOffsetsAreTheOnesVerbsFactsName() {
        assertEquals(208, IbvStructs.CTX_POST_SEND);
        assertEquals(216, IbvStructs.CTX_POST_RECV);
        assertEquals(96, IbvStructs.CTX_POLL_CQ);
        assertEquals(-192, IbvStructs.VC_ALLOC_TD);
        assertEquals(-120, IbvStructs.VC_CREATE_CQ_EX);
        assertEquals(-8, IbvStructs.VC_SZ);
        assertEquals(648, IbvStructs.VERBS_CONTEXT_SIZE);
        assertEquals(320, IbvStructs.QPX_START);
    }

    private static Path findCompiler() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            for (String cc : new String[]{"gcc", "cc"}) {
                Path p = Path.of(dir, cc);
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        return null;
    }

    private static boolean headersPresent(Path gcc) throws IOException, InterruptedException {
        for (String h : HEADERS) {
            if (!Files.exists(Path.of("/usr/include", h))) {
                return false;
            }
        }
        return true;
    }

    private static Map<String, long[]> compileAndRun(Path gcc, List<Entry> entries) throws Exception {
        Path dir = Files.createTempDirectory("scalep-layout");
        try {
            StringBuilder c = new StringBuilder();
            c.append("#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n");
            for (String h : HEADERS) {
                c.append("#include <").append(h).append(">\n");
            }
            c.append("int main(void) {\n");
            for (Entry e : entries) {
                String fmt = " %lld".repeat(e.values().length);
                c.append("  printf(\"").append(e.key()).append(fmt).append("\\n\", ").append(e.cExpr()).append(");\n");
            }
            c.append("  return 0;\n}\n");
            Path src = dir.resolve("layout.c");
            Files.writeString(src, c);
            Path bin = dir.resolve("layout");
            String compileOut = run(List.of(gcc.toString(), "-std=gnu11", "-o", bin.toString(), src.toString()));
            if (!Files.isExecutable(bin)) {
                fail("compiling the layout probe failed:\n" + compileOut);
            }
            String out = run(List.of(bin.toString()));
            Map<String, long[]> m = new LinkedHashMap<>();
            TreeSet<String> seen = new TreeSet<>();
            for (String line : out.lines().toList()) {
                int n = line.startsWith("F") && line.contains(" rel_to_ibv_context ") ? 3
                        : line.startsWith("C") ? 1 : 2;
                String[] t = line.split(" ");
                String key = String.join(" ", Arrays.copyOf(t, t.length - n));
                long[] v = new long[n];
                for (int i = 0; i < n; i++) {
                    v[i] = Long.parseLong(t[t.length - n + i]);
                }
                m.put(key, v);
                seen.add(key);
            }
            return m;
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static String run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("timed out: " + cmd);
        }
        return out;
    }
}
