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

/** The documents and sources point only at files that are in the repository, agree with the help on --quick and with the build on the JDK. */
class DocsTest {
    static final Path ROOT = Path.of("..");
    /** A path in backticks: has a slash or ends in a file extension we keep. */
    static final Pattern PATH = Pattern.compile("`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)+/?|[A-Za-z0-9_-]+\\.(?:md|yaml|json|sh))`");

    @Test
    void everyFileTheDocsNameExists() throws Exception {
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (String doc : new String[]{"README.md", "docs/ARCHITECTURE.md", "docs/RELIABILITY.md", "policies/README.md", "endpoints/README.md"}) {
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

    /** A markdown file named anywhere: {@code README.md}, {@code docs/ARCHITECTURE.md}. */
    static final Pattern MD = Pattern.compile("(?<![A-Za-z0-9_./-])([A-Za-z0-9_][A-Za-z0-9_./-]*\\.md)\\b");

    /**
     * Every {@code .md} file named in a markdown document or in a Java source (javadoc and comments
     * included) is in the repository: at that path from the root, or, for a bare name, in the naming
     * file's directory or one of its parents (a module's {@code README.md}).
     */
    @Test
    void everyMarkdownFileNamedInDocsOrSourcesExists() throws Exception {
        Path root = ROOT.toRealPath();
        List<Path> files;
        try (var s = Files.walk(root)) {
            files = s.filter(Files::isRegularFile)
                    .filter(f -> !root.relativize(f).toString().matches("(.*/)?(target|\\.git|\\.vm)/.*"))
                    .filter(f -> f.toString().endsWith(".md") || f.toString().endsWith(".java"))
                    .toList();
        }
        List<String> missing = new ArrayList<>();
        int sources = 0;
        int refs = 0;
        for (Path f : files) {
            if (f.toString().endsWith(".java")) {
                sources++;
            }
            Matcher m = MD.matcher(Files.readString(f));
            while (m.find()) {
                String ref = m.group(1);
                refs++;
                boolean found = Files.isRegularFile(root.resolve(ref));
                for (Path dir = f.getParent(); !found && dir != null && dir.startsWith(root); dir = dir.getParent()) {
                    found = Files.isRegularFile(dir.resolve(ref));
                }
                if (!found) {
                    missing.add(root.relativize(f) + ": " + ref);
                }
            }
        }
        assertTrue(sources > 100, "Java sources read: " + sources);
        assertTrue(refs >= 5, "markdown references checked: " + refs);
        assertEquals(List.of(), missing, "files named that are not in the repository");
    }

    /** The JDK the docs ask for is the one the build compiles for, and tools/jdk.sh reads it from the pom. */
    @Test
    void oneJdkRequirementEverywhere() throws Exception {
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        Matcher rel = Pattern.compile("<maven.compiler.release>(\\d+)</maven.compiler.release>").matcher(pom);
        assertTrue(rel.find(), "pom.xml sets maven.compiler.release");
        String jdk = rel.group(1);
        assertTrue(pom.contains("<requireJavaVersion><version>[${maven.compiler.release},)</version>"),
                "the enforcer rule uses maven.compiler.release");
        String script = Files.readString(ROOT.resolve("tools/jdk.sh"));
        assertTrue(script.contains("maven.compiler.release") && !script.matches("(?s).*min=[0-9].*"),
                "tools/jdk.sh reads the version from pom.xml instead of writing its own");
        int mentions = 0;
        for (String doc : new String[]{"README.md", "docs/ARCHITECTURE.md", "policies/README.md", "endpoints/README.md",
                "scalep", "run-tests"}) {
            Matcher m = Pattern.compile("(?i)JDK\\s*(?:>=\\s*)?(\\d+)\\s+or\\s+newer|JDK\\s*>=\\s*(\\d+)")
                    .matcher(Files.readString(ROOT.resolve(doc)));
            while (m.find()) {
                mentions++;
                String v = m.group(1) != null ? m.group(1) : m.group(2);
                assertEquals(jdk, v, doc + " asks for JDK " + v + ", the build for " + jdk);
            }
        }
        assertTrue(mentions >= 2, "the README says which JDK is needed");
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
