package dev.scalep.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code scalep} command line. User mistakes (bad flags, bad files, unknown devices) print one
 * message and exit 2; verbs failures print the verb, errno and device and exit 1; no stack traces
 * unless {@code SCALEP_DEBUG=1}.
 */
@Command(name = "scalep", mixinStandardHelpOptions = true, version = "scalep " + Main.VERSION,
        description = "Scalable RDMA communication endpoints: devices, sharing levels, policies, the sharing-tradeoff sweep.",
        subcommands = {
                DevicesCommand.class,
                PolicyCommand.class,
                ResourcesCommand.class,
                SweepCommand.class,
                CheckCommand.class,
                KernelCommand.class,
                PerftestCommand.class,
                SpmdCommand.class,
                StatCommand.class,
                DriftCommand.class,
                CommandLine.HelpCommand.class
        })
public final class Main implements Runnable {
    /** The project version (also the Maven version of every module). */
    public static final String VERSION = "0.1.0-SNAPSHOT";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
        if (dev.scalep.spmd.Bootstrap.launched(System.getenv())) {
            // Several ranks share the launcher's stdout/stderr: hand the OS whole lines.
            dev.scalep.spmd.Output.install();
        }
        int rc;
        try {
            rc = run(args);
        } catch (Throwable t) { // an Error escaping picocli's handler (e.g. a linkage problem)
            if ("1".equals(System.getenv("SCALEP_DEBUG"))) {
                t.printStackTrace();
            }
            System.err.println("scalep: internal error: " + t + " (run with SCALEP_DEBUG=1 for the stack trace)");
            rc = 1;
        }
        System.exit(rc);
    }

    /** Run the command line and return its exit code (tests call this). */
    public static int run(String... args) {
        CommandLine cl = new CommandLine(new Main());
        shareVersion(cl, cl.getCommandSpec().version());
        cl.setExecutionExceptionHandler(new ErrorHandler());
        cl.setParameterExceptionHandler(ErrorHandler::handleParameterException);
        return cl.execute(args);
    }

    /** Every subcommand answers {@code -V} with the version of the whole tool. */
    private static void shareVersion(CommandLine cl, String[] version) {
        cl.getCommandSpec().version(version);
        for (CommandLine sub : cl.getSubcommands().values()) {
            shareVersion(sub, version);
        }
    }
}
