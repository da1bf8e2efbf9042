package dev.scalep.spmd;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The PMI-2 wire protocol on {@code PMI_FD}: a PMI-1 {@code init} line asking for version 2, then
 * length-prefixed {@code cmd=...;key=value;} messages. Its gain over PMI-1 is the launcher's
 * process mapping ({@code PMI_process_mapping}, which rank runs on which node), which Slurm's
 * {@code srun --mpi=pmi2} gives. Slurm requires {@code pmijobid} (from {@code PMI_JOBID}),
 * {@code pmirank} and {@code threaded} in {@code fullinit}; hydra sets no {@code PMI_JOBID} and
 * takes a fullinit without it.
 */
final class Pmi2 extends PmiClient {
    /** Values longer than this crash Slurm 22.05's PMI-2 server (its buffer grows by 2048): keep far below. */
    static final int SLURM_SAFE_VALUE = 2048;

    private final String jobid;
    private final String mapping;
    private final int[] nodeOf;

    private Pmi2(PmiChannel ch, int rank, int size, String jobid, String mapping, int[] nodeOf) {
        super(ch, rank, size);
        this.jobid = jobid;
        this.mapping = mapping;
        this.nodeOf = nodeOf;
    }

    static Pmi2 connect(Map<String, String> env) {
        if (!env.containsKey("PMI_FD")) {
            throw new PmiException("PMI-2 needs PMI_FD, which is not set"
                    + (env.containsKey("PMI_PORT") ? " (PMI_PORT is: that is PMI-1, SCALEP_BOOTSTRAP=pmi1)" : ""));
        }
        int fd = envInt(env, "PMI_FD", 0);
        int envRank = envInt(env, "PMI_RANK", 0);
        PmiChannel ch = PmiChannel.fd(fd);
        try {
            String w = ch.where();
            ch.sendLine("cmd=init pmi_version=2 pmi_subversion=0");
            PmiMessage init = PmiMessage.line(ch.readLine()).expect("response_to_init", "init (PMI 2.0)", w);
            if (init.requireInt("pmi_version", w) != 2) {
                throw new PmiException("the PMI server on " + w + " answered init for PMI 2 with pmi_version="
                        + init.get("pmi_version") + " (Slurm fixes one PMI version per step: did another rank ask for PMI-1?)");
            }
            String jobEnv = env.get("PMI_JOBID");
            ch.sendFrame("cmd=fullinit;" + (jobEnv == null ? "" : "pmijobid=" + jobEnv + ";") + "pmirank=" + envRank
                    + ";threaded=FALSE;");
            PmiMessage full = PmiMessage.frame(ch.readFrame()).expect("fullinit-response", "fullinit", w);
            int rank = full.requireInt("rank", w);
            int size = full.requireInt("size", w);
            if (rank < 0 || size < 1 || rank >= size) {
                throw new PmiException("the PMI server on " + w + " gave rank " + rank + " of " + size);
            }
            ch.sendFrame("cmd=job-getid;");
            PmiMessage id = PmiMessage.frame(ch.readFrame()).expect("job-getid-response", "job-getid", w);
            String jobid = id.get("jobid") != null ? id.get("jobid") : jobEnv;
            ch.sendFrame("cmd=info-getjobattr;key=PMI_process_mapping;");
            PmiMessage map = PmiMessage.frame(ch.readFrame()).expect("info-getjobattr-response", "info-getjobattr", w);
            String mapping = "TRUE".equalsIgnoreCase(map.get("found")) ? map.get("value") : null;
            int[] nodeOf = mapping == null ? null : processMapping(mapping, size);
            return new Pmi2(ch, rank, size, jobid, mapping, nodeOf);
        } catch (RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * The node of every rank from a PMI process mapping: {@code (vector,(start,nodes,ranksPerNode),...)}
     * gives, block by block, {@code ranksPerNode} consecutive ranks to each of {@code nodes} nodes
     * from {@code start}, the list repeated until every rank has a node (cyclic placements).
     */
    static int[] processMapping(String mapping, int size) {
        String s = mapping.replace(" ", "");
        if (!s.startsWith("(vector,") || !s.endsWith(")")) {
            throw new PmiException("PMI_process_mapping '" + mapping + "' is not (vector,(start,nodes,ranks),...)");
        }
        List<int[]> blocks = new ArrayList<>();
        String body = s.substring("(vector,".length(), s.length() - 1);
        for (String b : body.split("\\),?")) {
            if (b.isEmpty()) {
                continue;
            }
            String[] t = b.replace("(", "").split(",");
            try {
                if (t.length != 3) {
                    throw new NumberFormatException();
                }
                int[] blk = {Integer.parseInt(t[0]), Integer.parseInt(t[1]), Integer.parseInt(t[2])};
                if (blk[0] < 0 || blk[1] < 1 || blk[2] < 1) {
                    throw new NumberFormatException();
                }
                blocks.add(blk);
            } catch (NumberFormatException e) {
                throw new PmiException("PMI_process_mapping '" + mapping + "' has a block '" + b + "' that is not (start,nodes,ranks)");
            }
        }
        if (blocks.isEmpty()) {
            throw new PmiException("PMI_process_mapping '" + mapping + "' has no blocks");
        }
        int[] nodeOf = new int[size];
        int r = 0;
        while (r < size) {
            for (int[] blk : blocks) {
                for (int n = 0; n < blk[1] && r < size; n++) {
                    for (int k = 0; k < blk[2] && r < size; k++) {
                        nodeOf[r++] = blk[0] + n;
                    }
                }
            }
        }
        return nodeOf;
    }

    static int envInt(Map<String, String> env, String name, int min) {
        String v = env.get(name);
        if (v == null) {
            throw new PmiException(name + " is not set, and the PMI launcher must set it");
        }
        try {
            int n = Integer.parseInt(v.strip());
            if (n < min) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new PmiException(name + "='" + v + "' is not a number >= " + min);
        }
    }

    @Override
    String protocol() {
        return "pmi2";
    }

    @Override
    int maxValue() {
        return SLURM_SAFE_VALUE;
    }

    @Override
    String describe() {
        return ch.where() + ", job " + jobid + (mapping == null ? "" : ", process mapping " + mapping);
    }

    @Override
    int[] nodeOfRank() {
        return nodeOf == null ? null : nodeOf.clone();
    }

    @Override
    void put(String key, String value) {
        ch.sendFrame("cmd=kvs-put;key=" + key + ";value=" + value + ";");
        PmiMessage.frame(ch.readFrame()).expect("kvs-put-response", "kvs-put of " + key, ch.where());
    }

    @Override
    void fence() {
        ch.sendFrame("cmd=kvs-fence;");
        PmiMessage.frame(ch.readFrame()).expect("kvs-fence-response", "kvs-fence", ch.where());
    }

    @Override
    String get(int from, String key) {
        ch.sendFrame("cmd=kvs-get;" + (jobid == null ? "" : "jobid=" + jobid + ";") + "srcid=-1;key=" + key + ";");
        PmiMessage m = PmiMessage.frame(ch.readFrame()).expect("kvs-get-response", "kvs-get of " + key, ch.where());
        return "TRUE".equalsIgnoreCase(m.get("found")) ? m.get("value") : null;
    }

    @Override
    void finalizeSession() {
        ch.sendFrame("cmd=finalize;");
        PmiMessage.frame(ch.readFrame()).expect("finalize-response", "finalize", ch.where());
    }
}
