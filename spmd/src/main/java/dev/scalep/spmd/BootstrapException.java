package dev.scalep.spmd;

/**
 * The process cannot join its job: launched by something that speaks only PMI-1/2, launched by a
 * PMIx launcher whose server is unreachable, or no PMIx client library. The message is one line
 * that names the cause and the fix; command lines print it and exit with status 2.
 */
public final class BootstrapException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BootstrapException(String message) {
        super(message);
    }
}
