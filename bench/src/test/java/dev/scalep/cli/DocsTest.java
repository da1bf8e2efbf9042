package dev.scalep.cli;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The documents point only at files that are in the repository, and agree with the help on --quick. */
class DocsTest {
    static final Path ROOT = Path.of("..");
    /** A path in backticks: has a slash or ends in a file extension we keep. */
    static final Pattern PATH = Pattern.compile("`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)+/?|[A-Za-z0-9_-]+\\.(?:md|yaml|json|sh))`");

    @Test
    void everyFileTheDocsNameExists() throws Exception {
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (String doc : new String[]{"README.md", "docs/ARCHITECTURE.md", "policies/README.md", "endpoints/README.md"}) {
            Path d = ROOT.resolve(doc);
            if (!Files.exists(d)) {
                continue;
            }
            String text = Files.readString(d);
            assertTrue(!text.contains("shared/design") && !text.contains("/work/"), doc + " points outside the repository");
            Matcher m = PATH.matcher(text);
            while (m.find()) {
                String ref = m.group(1);
                if (ref.contains("*") || ref.startsWith("dev.") || ref.contains("target/") || ref.startsWith("results/")
                        || ref.startsWith("/") || ref.contains("..")) {
                    continue; // globs, packages, build and run outputs
                }
                String last = ref.substring(ref.lastIndexOf('/', ref.length() - 2) + 1);
                String first = ref.split("/")[0];
                if (!last.contains(".") && !ref.endsWith("/") && !Files.isDirectory(ROOT.resolve(first))) {
                    continue; // not a path (a ratio such as t/k)
                }
                checked++;
                boolean found = Files.exists(ROOT.resolve(ref)) || Files.exists(d.getParent().resolve(ref));
                if (!found && !ref.contains("/")) {
                    try (var s = Files.walk(ROOT)) {
                        found = s.anyMatch(p -> p.getFileName().toString().equals(ref) && !p.toString().contains("target"));
                    }
                }
                if (!found) {
                    missing.add(doc + ": " + ref);
                }
            }
        }
        assertTrue(checked >= 5, "references checked: " + checked);
        assertEquals(List.of(), missing);
    }

    @Test
    void readmeAndHelpAgreeOnHowLongQuickTakes() throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        String help = new picocli.CommandLine(new Main()).getSubcommands().get("sweep").getCommandSpec()
                .findOption("--quick").description()[0];
        Matcher m = Pattern.compile("--quick` \\([^)]*\\) takes ([^.;(]+)").matcher(readme);
        assertTrue(m.find(), "README says how long --quick takes");
        assertTrue(help.contains(m.group(1).strip()), "help: '" + help + "' vs README: '" + m.group(1) + "'");
    }
}
