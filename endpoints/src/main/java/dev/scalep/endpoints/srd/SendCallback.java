package dev.scalep.endpoints.srd;

/**
 * Run by {@link OrderedSender#progress()} for each operation, in post order, once its send
 * completion (and those of every earlier operation) arrived. Primitive arguments only: invoking it
 * allocates nothing.
 */
@FunctionalInterface
public interface SendCallback {
    /**
     * @param seq    the operation's sequence number (as returned by the post)
     * @param kind   an {@link ImmCodec} kind
     * @param status the {@code WcStatus} of its completion (0 = success)
     */
    void completed(long seq, int kind, int status);
}
