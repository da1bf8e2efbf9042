package dev.scalep.cli;

import dev.scalep.verbs.VerbsException;
import picocli.CommandLine;

/** Turns exceptions from commands into one readable line and an exit code; stack traces only with SCALEP_DEBUG=1. */
final class ErrorHandler implements CommandLine.IExecutionExceptionHandler {
    static final int USER_ERROR = 2;
    static final int VERBS_ERROR = 1;

    @Override
    public int handleExecutionException(Exception ex, CommandLine cl, CommandLine.ParseResult parsed) {
        if ("1".equals(System.getenv("SCALEP_DEBUG"))) {
            ex.printStackTrace();
        }
        String cmd = cl.getCommandSpec().qualifiedName();
        if (ex instanceof UserException || ex instanceof IllegalArgumentException
                || ex instanceof dev.scalep.spmd.BootstrapException) {
            cl.getErr().println(cmd + ": " + ex.getMessage());
            return USER_ERROR;
        }
        if (ex instanceof VerbsException) {
            cl.getErr().println(cmd + ": " + ex.getMessage());
            return VERBS_ERROR;
        }
        cl.getErr().println(cmd + ": internal error: " + ex
                + " (run with SCALEP_DEBUG=1 for the stack trace, and please report it)");
        return VERBS_ERROR;
    }
}
