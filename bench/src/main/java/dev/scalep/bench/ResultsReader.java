package dev.scalep.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.scalep.verbs.ResourceUsage;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the measurements back from a {@code results.json} that {@link ResultsWriter} wrote: the
 * rows' timings, counts and resources, attached to the point the caller knows they measured (a
 * policy class does not travel through the file, so the point is the caller's, not rebuilt).
 */
public final class ResultsReader {
    private ResultsReader() {
    }

    /** Every row of {@code json}, as measurements of {@code point}. */
    public static List<Measurement> measurements(Path json, SweepPoint point) throws IOException {
        JsonNode rows = new ObjectMapper().readTree(json.toFile()).path("rows");
        if (!rows.isArray()) {
            throw new IOException(json + ": no rows");
        }
        List<Measurement> out = new ArrayList<>();
        for (JsonNode r : rows) {
            ResourceUsage res = new ResourceUsage(num(r, "contexts"), num(r, "pds"), num(r, "mrs"), num(r, "qps"),
                    num(r, "cqs"), num(r, "srqs"), num(r, "tds"), num(r, "uarPages"), num(r, "uuars"),
                    num(r, "uarPagesInUse"), num(r, "uuarsInUse"), num(r, "memoryBytes"));
            out.add(new Measurement(point, (int) num(r, "repeat"), r.path("seconds").asDouble(), num(r, "messages"), res,
                    r.path("notes").asText(""), (int) num(r, "unsignaled"), (int) num(r, "ranks"),
                    (int) num(r, "payloadBytes"), counters(r), r.path("warmupRounds").asInt(0),
                    r.path("controlNs").asLong(0), r.path("jitRounds").asInt(0)));
        }
        return out;
    }

    /** The row's counter columns, or null when it has none (counting was off, or an older file). */
    private static CounterDelta counters(JsonNode r) throws IOException {
        JsonNode w = r.get("wrs");
        if (w == null || !w.canConvertToLong()) {
            return null;
        }
        return new CounterDelta(num(r, "wrs"), num(r, "doorbells"), num(r, "completions"), num(r, "combinerPasses"),
                num(r, "combinedWrs"), num(r, "lockAcquired"), num(r, "lockContended"), num(r, "handoffs"),
                num(r, "backPressured"), num(r, "blueFlameWrites"));
    }

    private static long num(JsonNode row, String field) throws IOException {
        JsonNode v = row.get(field);
        if (v == null || !v.canConvertToLong()) {
            throw new IOException("results row without a number in '" + field + "': " + row);
        }
        return v.asLong();
    }
}
