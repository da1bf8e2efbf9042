package dev.scalep.spmd;

import java.nio.charset.StandardCharsets;

/**
 * The small SPMD program the tests launch: joins the world, all-gathers each rank's
 * {@code rank:size:host:localRank} and checks every entry against the world's own tables, runs a
 * barrier, and prints one line per rank. Mode {@code die}: the last rank kills itself with SIGKILL
 * after the first barrier while the others wait in a second one.
 */
public final class WorldMain {
    private WorldMain() {
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
