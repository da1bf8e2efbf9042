package dev.scalep.spmd;

/**
 * The process cannot join its job: several copies started with no process-management server
 * ({@code srun --mpi=none}), a PMIx or PMI server that is unreachable or answers out of protocol,
 * no PMIx client library, or a {@code SCALEP_BOOTSTRAP} the launcher cannot serve. The message is
 * one line that names the cause and the fix; command lines print it and exit with status 2.
 */
public final class BootstrapException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BootstrapException(String message) {
        super(message);
    }
}
