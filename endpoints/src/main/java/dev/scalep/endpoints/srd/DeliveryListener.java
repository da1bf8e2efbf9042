package dev.scalep.endpoints.srd;

/**
 * Told by {@link OrderedReceiver} when it applies an operation: a data write (after its bytes are in
 * place) or an emulated fetch-add (after the add). In {@code receiver-reorder} mode calls come in
 * sequence order; otherwise in arrival order. Primitive arguments only.
 */
@FunctionalInterface
public interface DeliveryListener {
    /**
     * @param seq    the operation's 64-bit sequence number
     * @param kind   an {@link ImmCodec} kind
     * @param a      bytes written (DATA) or counter index (atomics)
     * @param b      0 (DATA) or the addend (atomics)
     * @param before the counter's value before the add (atomics), 0 for DATA
     */
    void delivered(long seq, int kind, int a, long b, long before);
}
