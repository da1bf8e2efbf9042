package dev.scalep.spmd;

/**
 * One rank's session with a PMI-1 or PMI-2 server: the put/fence/get key-value space both
 * protocols offer, plus what the launcher told the rank. Calls are made by one thread at a time,
 * each a request and its reply. {@link #close()} finalizes and closes the channel.
 */
interface PmiClient extends AutoCloseable {
    /** {@code pmi1} or {@code pmi2}. */
    String protocol();

    int rank();

    int size();

    /** The longest value the server takes for one key, as it reported it (or the protocol's known bound). */
    int maxValue();

    /** Where the server is and which key space this rank writes, e.g. {@code PMI_FD=6, kvs kvs_123_0}. */
    String describe();

    /** Node of every rank as the launcher mapped them ({@code PMI_process_mapping}), or null when it does not say. */
    int[] nodeOfRank();

    /** Store {@code value} (base64url, no separators) under {@code key}, visible to all after the next fence. */
    void put(String key, String value);

    /** Publish this rank's puts and wait until every rank has done the same. */
    void fence();

    /** The value rank {@code from} put under {@code key}, or null when the server has none. */
    String get(int from, String key);

    /** Finalize (best effort) and close the channel. */
    @Override
    void close();
}
