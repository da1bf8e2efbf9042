package dev.scalep.spmd;

import java.util.Base64;

/**
 * How bytes travel through a PMI key-value space that every launcher takes. A value is the
 * base64url text of the bytes (letters, digits, {@code -} and {@code _}: no space, {@code ;},
 * {@code =} or newline, all within the printable ASCII Flux allows), cut into segments of at most
 * {@link #SEGMENT} characters. The first segment goes under the base key, prefixed with the segment
 * count and a colon ({@code 3:...}); segment i (from 1) under {@code base.i}.
 *
 * <p>Why 512: hydra keeps a value in 1024 bytes with its NUL; Slurm's PMI-1 server reads a whole
 * request with one 1024-byte {@code read()}, and {@code cmd=put kvsname=K key=k value=V} with a
 * 256-character kvsname and a 64-character key leaves about 690 for V; Slurm 22.05's PMI-2 server
 * crashed on an 8192-character value (its buffer grows by 2048). 512 plus the count is under all
 * three with room; a server that reports a smaller {@code vallen_max} gets segments 16 under it.
 */
final class PmiKvs {
    /** Characters of encoded data per key. */
    static final int SEGMENT = 512;

    private PmiKvs() {
    }

    /** The segment length for a server whose longest value is {@code maxValue} (with the count prefix and a NUL). */
    static int segment(int maxValue) {
        int seg = Math.min(SEGMENT, maxValue - 16);
        if (seg < 16) {
            throw new PmiException("the PMI server takes values of at most " + maxValue + " characters: too short to carry data");
        }
        return seg;
    }

    /** Put {@code data} under {@code base} (and {@code base.1}, ...) in segments of {@code segment} characters. */
    static void put(PmiClient pmi, String base, byte[] data, int segment) {
        String text = Base64.getUrlEncoder().withoutPadding().encodeToString(data);
        int parts = Math.max(1, (text.length() + segment - 1) / segment);
        for (int i = 0; i < parts; i++) {
            String part = text.substring(Math.min(text.length(), i * segment), Math.min(text.length(), (i + 1) * segment));
            pmi.put(i == 0 ? base : base + "." + i, i == 0 ? parts + ":" + part : part);
        }
    }

    /** The bytes rank {@code from} put under {@code base}. */
    static byte[] get(PmiClient pmi, int from, String base) {
        String first = pmi.get(from, base);
        if (first == null) {
            throw new PmiException("rank " + from + "'s value " + base + " is missing from the PMI key space");
        }
        int colon = first.indexOf(':');
        int parts;
        try {
            parts = Integer.parseInt(first.substring(0, Math.max(colon, 0)));
        } catch (NumberFormatException e) {
            parts = -1;
        }
        if (colon < 0 || parts < 1) {
            throw new PmiException("rank " + from + "'s value " + base + " is not count:data: '" + abbreviate(first) + "'");
        }
        StringBuilder text = new StringBuilder(first.length() * parts).append(first, colon + 1, first.length());
        for (int i = 1; i < parts; i++) {
            String part = pmi.get(from, base + "." + i);
            if (part == null) {
                throw new PmiException("segment " + i + " of " + parts + " of rank " + from + "'s value " + base + " is missing");
            }
            text.append(part);
        }
        try {
            return Base64.getUrlDecoder().decode(text.toString());
        } catch (IllegalArgumentException e) {
            throw new PmiException("rank " + from + "'s value " + base + " is not base64url (" + e.getMessage() + ")");
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
