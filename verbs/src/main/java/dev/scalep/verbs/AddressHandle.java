package dev.scalep.verbs;

/** An address handle to one destination, used on each UD/SRD work request. */
public interface AddressHandle extends AutoCloseable {
    ProtectionDomain pd();

    QpAddress destination();

    /** The provider's handle value stored in {@code wr.ud.ah} (a native pointer on ibv). */
    long handle();

    @Override
    void close();
}
