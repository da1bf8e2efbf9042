package dev.scalep.spmd;

import java.util.Map;

/**
 * The PMI-1 wire protocol (MPICH's "simple" PMI): newline-terminated lines of {@code key=value}
 * tokens on {@code PMI_FD}, or on a TCP connection to {@code PMI_PORT} announced with
 * {@code PMI_ID} (hydra's {@code -pmi-port}). Spoken by MPICH's hydra, Slurm's {@code --mpi=pmi2}
 * plugin (which answers both versions), Flux's default PMI server and the Intel MPI and MVAPICH
 * launchers. Version 1.1 is asked for; any 1.x answer with x at least 1 is accepted.
 */
final class Pmi1 extends PmiClient {
    private final String kvs;
    private final int maxValue;

    private Pmi1(PmiChannel ch, int rank, int size, String kvs, int maxValue) {
        super(ch, rank, size);
        this.kvs = kvs;
        this.maxValue = maxValue;
    }

    /** Connect as {@code env} says ({@code PMI_FD} with {@code PMI_RANK}/{@code PMI_SIZE}, or {@code PMI_PORT} with {@code PMI_ID}). */
    static Pmi1 connect(Map<String, String> env) {
        PmiChannel ch;
        int rank;
        int size;
        if (env.containsKey("PMI_FD")) {
            int fd = Pmi2.envInt(env, "PMI_FD", 0);
            rank = Pmi2.envInt(env, "PMI_RANK", 0);
            size = Pmi2.envInt(env, "PMI_SIZE", 1);
            ch = PmiChannel.fd(fd);
        } else {
            String port = env.get("PMI_PORT");
            if (port == null) {
                throw new PmiException("neither PMI_FD nor PMI_PORT is set: no PMI server to talk to");
            }
            int id = Pmi2.envInt(env, "PMI_ID", 0);
            ch = PmiChannel.port(port);
            try {
                // hydra's port mode: the rank names itself first, then is told its size and rank
                ch.sendLine("cmd=initack pmiid=" + id);
                PmiMessage.line(ch.readLine()).expect("initack", "initack", ch.where());
                Integer r = null;
                Integer s = null;
                boolean debug = false;
                while (r == null || s == null || !debug) {
                    PmiMessage m = PmiMessage.line(ch.readLine()).expect("set", "initack", ch.where());
                    if (m.get("size") != null) {
                        s = m.requireInt("size", ch.where());
                    } else if (m.get("rank") != null) {
                        r = m.requireInt("rank", ch.where());
                    } else if (m.get("debug") != null) {
                        debug = true;
                    } else {
                        throw new PmiException("the PMI server on " + ch.where() + " sent '" + m.text() + "' after initack");
                    }
                }
                rank = r;
                size = s;
            } catch (RuntimeException e) {
                ch.close();
                throw e;
            }
        }
        try {
            String w = ch.where();
            ch.sendLine("cmd=init pmi_version=1 pmi_subversion=1");
            PmiMessage init = PmiMessage.line(ch.readLine()).expect("response_to_init", "init (PMI 1.1)", w);
            int version = init.requireInt("pmi_version", w);
            int sub = init.requireInt("pmi_subversion", w);
            if (version != 1 || sub < 1) {
                throw new PmiException("the PMI server on " + w + " speaks PMI " + version + "." + sub + ", not 1.1 or later 1.x");
            }
            ch.sendLine("cmd=get_maxes");
            PmiMessage maxes = PmiMessage.line(ch.readLine()).expect("maxes", "get_maxes", w);
            int vallen = maxes.requireInt("vallen_max", w);
            ch.sendLine("cmd=get_my_kvsname");
            String kvs = PmiMessage.line(ch.readLine()).expect("my_kvsname", "get_my_kvsname", w).require("kvsname", w);
            if (rank < 0 || size < 1 || rank >= size) {
                throw new PmiException("the launcher gave rank " + rank + " of " + size + " (" + w + ")");
            }
            return new Pmi1(ch, rank, size, kvs, vallen);
        } catch (RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    @Override
    String protocol() {
        return "pmi1";
    }

    @Override
    int maxValue() {
        return maxValue;
    }

    @Override
    String describe() {
        return ch.where() + ", kvs " + kvs;
    }

    @Override
    int[] nodeOfRank() {
        return null;
    }

    @Override
    void put(String key, String value) {
        ch.sendLine("cmd=put kvsname=" + kvs + " key=" + key + " value=" + value);
        PmiMessage.line(ch.readLine()).expect("put_result", "put of " + key, ch.where());
    }

    @Override
    void fence() {
        ch.sendLine("cmd=barrier_in");
        PmiMessage.line(ch.readLine()).expect("barrier_out", "barrier_in", ch.where());
    }

    @Override
    String get(int from, String key) {
        ch.sendLine("cmd=get kvsname=" + kvs + " key=" + key);
        PmiMessage m = PmiMessage.line(ch.readLine());
        if (!"get_result".equals(m.get("cmd"))) {
            m.expect("get_result", "get of " + key, ch.where());
        }
        String rc = m.get("rc");
        if ((rc != null && !rc.strip().equals("0")) || "FALSE".equalsIgnoreCase(m.get("found"))) {
            return null;
        }
        return m.get("value");
    }

    @Override
    void finalizeSession() {
        ch.sendLine("cmd=finalize");
        PmiMessage.line(ch.readLine()).expect("finalize_ack", "finalize", ch.where());
    }
}
