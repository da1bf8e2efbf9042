package dev.scalep.spmd;

/**
 * One rank's session with a PMI-1 or PMI-2 server: the put/fence/get key-value space both
 * protocols offer, plus what the launcher told the rank. Calls are made by one thread at a time,
 * each a request and its reply. {@link #close()} finalizes and closes the channel.
 */
abstract sealed class PmiClient implements AutoCloseable permits Pmi1, Pmi2 {
    protected final PmiChannel ch;
    private final int rank;
    private final int size;
    private boolean closed;

    PmiClient(PmiChannel ch, int rank, int size) {
        this.ch = ch;
        this.rank = rank;
        this.size = size;
    }

    /** {@code pmi1} or {@code pmi2}. */
    abstract String protocol();

    final int rank() {
        return rank;
    }

    final int size() {
        return size;
    }

    /** The longest value the server takes for one key, as it reported it (or the protocol's known bound). */
    abstract int maxValue();

    /** Where the server is and which key space this rank writes, e.g. {@code PMI_FD=6, kvs kvs_123_0}. */
    abstract String describe();

    /** Node of every rank as the launcher mapped them ({@code PMI_process_mapping}), or null when it does not say. */
    abstract int[] nodeOfRank();

    /** Store {@code value} (base64url, no separators) under {@code key}, visible to all after the next fence. */
    abstract void put(String key, String value);

    /** Publish this rank's puts and wait until every rank has done the same. */
    abstract void fence();

    /** The value rank {@code from} put under {@code key}, or null when the server has none. */
    abstract String get(int from, String key);

    /** Tell the server this rank is leaving and read its acknowledgement (may throw {@link PmiException}). */
    abstract void finalizeSession();

    /** Finalize (best effort) and close the channel. Idempotent. */
    @Override
    public final synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            finalizeSession();
        } catch (PmiException e) {
            // leaving anyway: the server may have gone first
        } finally {
            ch.close();
        }
    }
}
