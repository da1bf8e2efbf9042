package dev.scalep.cli;

import dev.scalep.spmd.World;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The options every rank of an SPMD command must share (device, sizes, counts, levels, iterations,
 * messages, repeats: every option but the few that are one rank's own, such as where rank 0 writes;
 * a real device only by its kind, {@link #deviceKind}),
 * compared once at start-up through the world's all-gather. A difference, an option given to some
 * ranks only included, is one line naming the option and the ranks, on every rank (exit 2): ranks
 * that went on with different sizes or counts would exchange mismatched data, stall or misreport a
 * lost rank.
 */
final class RankAgreement {
    private RankAgreement() {
    }

    /** Compare this rank's options with every other rank's; {@code ownOptions} are not compared. */
    static void check(World w, CommandSpec spec, Set<String> ownOptions) {
        if (w.size() < 2) {
            return;
        }
        Map<String, String> mine = values(spec, ownOptions);
        byte[][] all = w.allgather(encode(mine));
        List<Map<String, String>> ranks = new ArrayList<>();
        for (byte[] b : all) {
            ranks.add(decode(b));
        }
        String mismatch = firstMismatch(ranks, mine.keySet());
        if (mismatch != null) {
            throw new UserException(mismatch);
        }
    }

    /**
     * The first option whose value differs between ranks, as one line, or null when all agree.
     * Options are taken in this rank's order, then any only other ranks have.
     */
    static String firstMismatch(List<Map<String, String>> ranks, Iterable<String> order) {
        List<String> keys = new ArrayList<>();
        order.forEach(keys::add);
        for (Map<String, String> r : ranks) {
            for (String k : r.keySet()) {
                if (!keys.contains(k)) {
                    keys.add(k);
                }
            }
        }
        for (String k : keys) {
            Map<String, List<Integer>> groups = new LinkedHashMap<>();
            for (int r = 0; r < ranks.size(); r++) {
                groups.computeIfAbsent(ranks.get(r).getOrDefault(k, "not given"), v -> new ArrayList<>()).add(r);
            }
            if (groups.size() > 1) {
                List<String> parts = new ArrayList<>();
                groups.forEach((v, rs) -> parts.add(v + " on " + ranksText(rs)));
                return k + " differs between ranks (" + String.join(", ", parts) + "): every rank must be started with "
                        + "the same options";
            }
        }
        return null;
    }

    private static String ranksText(List<Integer> rs) {
        List<String> shown = new ArrayList<>();
        for (int i = 0; i < rs.size() && i < 8; i++) {
            shown.add(Integer.toString(rs.get(i)));
        }
        return (rs.size() == 1 ? "rank " : "ranks ") + String.join(",", shown) + (rs.size() > 8 ? ",..." : "");
    }

    /** Each compared option and positional parameter: what the user gave, or "not given" (a default). */
    static Map<String, String> values(CommandSpec spec, Set<String> ownOptions) {
        Map<String, String> out = new TreeMap<>();
        CommandLine.ParseResult pr = spec.commandLine().getParseResult();
        for (OptionSpec o : spec.options()) {
            String name = o.longestName();
            if (o.usageHelp() || o.versionHelp() || ownOptions.contains(name)) {
                continue;
            }
            OptionSpec matched = pr == null ? null : pr.matchedOption(name);
            String v = matched == null ? "not given" : shown(matched);
            out.put(name, name.equals("--device") ? deviceKind(v) : v);
        }
        int i = 0;
        for (PositionalParamSpec p : spec.positionalParameters()) {
            out.put(p.paramLabel() + (i++ == 0 ? "" : " " + i), shown(p));
        }
        return out;
    }

    /**
     * What of {@code --device} must agree: a simulated device by name (ranks on sim:mlx5 and sim:efa
     * would share no fabric), a real device only by being real, since each host names its own NICs
     * (rank 0 on rxe0 and rank 1 on rxe1, mlx5_0 here and mlx5_1 there).
     */
    static String deviceKind(String device) {
        return device.equals("not given") || device.startsWith("sim:") ? device : "a real device";
    }

    private static String shown(ArgSpec a) {
        List<String> s = a.stringValues();
        if (s.isEmpty()) {
            return a.typedValues().isEmpty() ? "given" : String.valueOf(a.typedValues());
        }
        return String.join(" ", s);
    }

    private static byte[] encode(Map<String, String> m) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DataOutputStream d = new DataOutputStream(b)) {
            d.writeInt(m.size());
            for (Map.Entry<String, String> e : m.entrySet()) {
                d.writeUTF(clip(e.getKey()));
                d.writeUTF(clip(e.getValue()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    private static String clip(String s) {
        return s.length() > 4000 ? s.substring(0, 4000) : s;
    }

    private static Map<String, String> decode(byte[] bytes) {
        Map<String, String> m = new LinkedHashMap<>();
        try (DataInputStream d = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int n = d.readInt();
            for (int i = 0; i < n && i < 1000; i++) {
                m.put(d.readUTF(), d.readUTF());
            }
        } catch (IOException e) {
            m.put("(options)", "unreadable");
        }
        return m;
    }
}
