package dev.scalep.verbs;

import dev.scalep.verbs.counters.Events;

/**
 * A failed verbs call on the control path (create, modify, destroy, register, connect). The message
 * names the verb, the errno with its symbolic name, the device and the limit or argument at fault:
 * {@code ibv_reg_mr failed on sim:mlx5: errno=12 (ENOMEM), length=1048576}.
 * The data path reports back-pressure and errors as return codes instead.
 */
public class VerbsException extends RuntimeException {
    private final String verb;
    private final int errno;
    private final String device;

    public VerbsException(String verb, int errno, String device, String detail) {
        super(verb + " failed on " + device + ": errno=" + errno + " (" + Errno.name(errno) + ")"
                + (detail == null || detail.isEmpty() ? "" : ", " + detail));
        this.verb = verb;
        this.errno = errno;
        this.device = device;
        Events.error(verb, errno, device, getMessage());
    }

    /** The verb that failed, e.g. {@code ibv_create_qp}. */
    public String verb() {
        return verb;
    }

    /** The errno value the verb reported. */
    public int errno() {
        return errno;
    }

    /** The device name the call was made on. */
    public String device() {
        return device;
    }
}
