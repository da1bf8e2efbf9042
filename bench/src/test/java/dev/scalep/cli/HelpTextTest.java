package dev.scalep.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Help examples can be copied and pasted: no example line is wrapped, no help line is wider than 80 columns. */
class HelpTextTest {
    static void all(CommandLine cl, List<CommandLine> out) {
        out.add(cl);
        cl.getSubcommands().values().forEach(s -> all(s, out));
    }

    @Test
    void examplesAreNeverWrappedMidToken() {
        List<CommandLine> commands = new ArrayList<>();
        all(new CommandLine(new Main()), commands);
        int examples = 0;
        for (CommandLine cl : commands) {
            String usage = cl.getUsageMessage(CommandLine.Help.Ansi.OFF);
            List<String> lines = usage.lines().toList();
            for (String line : lines) {
                assertTrue(line.length() <= 80, cl.getCommandSpec().qualifiedName() + ": line of " + line.length()
                        + " columns: " + line);
            }
            for (String f : cl.getCommandSpec().usageMessage().footer()) {
                if (f.startsWith("  scalep ") || f.startsWith("      --")) {
                    examples++;
                    // picocli formats footers: %% is shown as %
                    assertTrue(lines.contains(f.replace("%%", "%")), cl.getCommandSpec().qualifiedName() + ": example not shown whole: " + f);
                }
            }
        }
        assertTrue(examples >= 10, "examples checked: " + examples);
    }
}
