package dev.scalep.spmd;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The small SPMD program the tests launch: joins the world, all-gathers each rank's
 * {@code rank:size:host:localRank} and checks every entry against the world's own tables, runs a
 * barrier, and prints one line per rank. Mode {@code big}: each rank all-gathers some kilobytes
 * (rank 0 nothing in the first round) that must cross the PMI launchers' value limits in segments.
 * Mode {@code die}: the last rank kills itself with SIGKILL after the first barrier while the others
 * wait in a second one.
 */
public final class WorldMain {
    private WorldMain() {
    }

    /** Rank {@code r}'s bytes in round {@code round} of mode big: kilobytes of every byte value, or none. */
    static byte[] big(int r, int round) {
        byte[] b = new byte[r == 0 && round == 0 ? 0 : 3000 * (r + 1) + 17 * round];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 31 + r * 7 + round);
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "gather";
        World w;
        try {
            w = World.open();
        } catch (BootstrapException e) {
            Output.line(System.err, "worldmain: " + e.getMessage());
            System.exit(2);
            return;
        }
        try (w) {
            if (mode.equals("big")) {
                for (int round = 0; round < 2; round++) {
                    byte[][] all = w.allgather(big(w.rank(), round));
                    for (int r = 0; r < w.size(); r++) {
                        if (!Arrays.equals(big(r, round), all[r])) {
                            throw new AssertionError("rank " + w.rank() + ": round " + round + " entry of rank " + r + " ("
                                    + all[r].length + " bytes) differs from the " + big(r, round).length + " bytes it sent");
                        }
                    }
                }
            }
            int rounds = mode.equals("gather") ? 3 : 1;
            for (int round = 0; round < rounds; round++) {
                // Different lengths per rank and per round, zero bytes inside.
                String mine = w.rank() + ":" + w.size() + ":" + w.host(w.rank()) + ":" + w.localRank() + ":" + round
                        + "\0" + "x".repeat(w.rank() * 7 + round);
                byte[][] all = w.allgather(mine.getBytes(StandardCharsets.UTF_8));
                if (all.length != w.size()) {
                    throw new AssertionError("allgather returned " + all.length + " entries for " + w.size() + " ranks");
                }
                for (int r = 0; r < w.size(); r++) {
                    String want = r + ":" + w.size() + ":" + w.host(r) + ":" + w.localRank(r) + ":" + round
                            + "\0" + "x".repeat(r * 7 + round);
                    String got = new String(all[r], StandardCharsets.UTF_8);
                    if (!want.equals(got)) {
                        throw new AssertionError("rank " + w.rank() + ": entry of rank " + r + " is '" + got + "', expected '" + want + "'");
                    }
                }
            }
            w.barrier();
            if (mode.equals("die")) {
                if (w.rank() == w.size() - 1) {
                    new ProcessBuilder("kill", "-9", Long.toString(ProcessHandle.current().pid())).start().waitFor();
                    Thread.sleep(60_000);
                }
                w.barrier();
                Output.line(System.out, "worldmain: rank " + w.rank() + " passed the barrier after a rank died");
                System.exit(1);
            }
            Output.line(System.out, "worldmain: rank " + w.rank() + " of " + w.size() + " local " + w.localRank()
                    + " node " + w.node(w.rank()) + " verified " + w.describe());
        }
    }
}
