package dev.scalep.cli;

import dev.scalep.spmd.BootstrapException;
import dev.scalep.verbs.VerbsException;
import picocli.CommandLine;

/** Turns exceptions from commands into one readable line and an exit code; stack traces only with SCALEP_DEBUG=1. */
final class ErrorHandler implements CommandLine.IExecutionExceptionHandler {
    static final int USER_ERROR = 2;
    static final int VERBS_ERROR = 1;

    /**
     * A mistake picocli finds while parsing (a type error, an unknown or missing option): one line
     * naming it and the {@code --help} of the command, instead of the whole usage.
     */
    static int handleParameterException(CommandLine.ParameterException ex, String[] args) {
        CommandLine cl = ex.getCommandLine();
        String cmd = cl.getCommandSpec().qualifiedName();
        String msg = ex.getMessage() == null ? "bad arguments" : ex.getMessage().lines().findFirst().orElse("bad arguments");
        if (msg.endsWith(".")) {
            msg = msg.substring(0, msg.length() - 1);
        }
        cl.getErr().println(cmd + ": " + msg + " (see '" + cmd + " --help')");
        return USER_ERROR;
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine cl, CommandLine.ParseResult parsed) {
        if ("1".equals(System.getenv("SCALEP_DEBUG"))) {
            ex.printStackTrace();
        }
        String cmd = cl.getCommandSpec().qualifiedName();
        if (ex instanceof UserException || ex instanceof IllegalArgumentException || ex instanceof BootstrapException) {
            cl.getErr().println(cmd + ": " + String.valueOf(ex.getMessage()).replace("(see --help)", "(see '" + cmd + " --help')"));
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
