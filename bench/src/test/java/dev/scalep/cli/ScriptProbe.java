package dev.scalep.cli;

/** A main class for the launcher script's tests: says it ran, with its arguments. */
public final class ScriptProbe {
    private ScriptProbe() {
    }

    public static void main(String[] args) {
        System.out.println("probe ran " + String.join(" ", args));
    }
}
