package dev.scalep.spmd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where every rank runs: host name and process id, exchanged once when a world forms, and what
 * follows from them (node number, local rank, whether a rank on this node is still alive).
 */
final class RankTable {
    private final String[] hosts;
    private final long[] pids;
    private final int[] node;
    private final int[] localRank;
    private final int nodes;

    /**
     * {@code launcherNodes}: the node of every rank as the launcher placed them (any numbering), or
     * null to group ranks by host name. Nodes are renumbered in order of each node's lowest rank.
     */
    RankTable(String[] hosts, long[] pids, int[] launcherNodes) {
        this.hosts = hosts.clone();
        this.pids = pids.clone();
        int n = hosts.length;
        if (launcherNodes != null && launcherNodes.length != n) {
            throw new IllegalArgumentException("a node for each of " + n + " ranks, not " + launcherNodes.length);
        }
        this.node = new int[n];
        this.localRank = new int[n];
        Map<Object, int[]> byNode = new LinkedHashMap<>(); // host or launcher node -> {node, ranks seen}
        for (int r = 0; r < n; r++) {
            Object where = launcherNodes == null ? hosts[r] : Integer.valueOf(launcherNodes[r]);
            int[] h = byNode.computeIfAbsent(where, k -> new int[]{byNode.size(), 0});
            node[r] = h[0];
            localRank[r] = h[1]++;
        }
        this.nodes = byNode.size();
    }

    /** This process's entry as exchanged: {@code host\npid}. */
    static byte[] self() {
        return (hostName() + "\n" + ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8);
    }

    /** Parse every rank's {@link #self()} entry; {@code launcherNodes} as in the constructor. */
    static RankTable parse(byte[][] entries, int[] launcherNodes) {
        String[] hosts = new String[entries.length];
        long[] pids = new long[entries.length];
        for (int r = 0; r < entries.length; r++) {
            String s = new String(entries[r], StandardCharsets.UTF_8);
            int nl = s.indexOf('\n');
            if (nl < 0) {
                throw new IllegalStateException("rank " + r + " sent a malformed rank entry: '" + s + "'");
            }
            hosts[r] = s.substring(0, nl);
            pids[r] = Long.parseLong(s.substring(nl + 1).strip());
        }
        return new RankTable(hosts, pids, launcherNodes);
    }

    static String hostName() {
        try {
            String h = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
            if (!h.isEmpty()) {
                return h;
            }
        } catch (IOException | SecurityException e) {
            // fall through
        }
        String h = System.getenv("HOSTNAME");
        return h == null || h.isBlank() ? "localhost" : h;
    }

    int size() {
        return hosts.length;
    }

    String host(int r) {
        return hosts[r];
    }

    long pid(int r) {
        return pids[r];
    }

    int node(int r) {
        return node[r];
    }

    int localRank(int r) {
        return localRank[r];
    }

    int nodes() {
        return nodes;
    }

    /** The lowest rank on {@code me}'s node, other than {@code me}, whose process no longer exists; or -1. */
    int firstDeadOnNode(int me) {
        for (int r = 0; r < hosts.length; r++) {
            if (r != me && node[r] == node[me] && pids[r] != pids[me]) {
                boolean alive = ProcessHandle.of(pids[r]).map(ProcessHandle::isAlive).orElse(false);
                if (!alive) {
                    return r;
                }
            }
        }
        return -1;
    }
}
