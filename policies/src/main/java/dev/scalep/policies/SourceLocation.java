package dev.scalep.policies;

/**
 * A position in a policy source, 1-based line and column (columns count Unicode code points).
 *
 * @param file   the file name or label the source was loaded under
 * @param line   1-based line
 * @param column 1-based column
 */
public record SourceLocation(String file, int line, int column) {
    @Override
    public String toString() {
        return file + ":" + line + ":" + column;
    }
}
