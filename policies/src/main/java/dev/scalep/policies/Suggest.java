package dev.scalep.policies;

import java.util.Collection;

/** "Did you mean" suggestions by edit distance. */
final class Suggest {
    private Suggest() {
    }

    /** The candidate closest to {@code word}, or null when none is close (distance > max(2, length/3)). */
    static String closest(String word, Collection<String> candidates) {
        if (word.length() > 64) {
            return null;
        }
        String best = null;
        int bestD = Integer.MAX_VALUE;
        for (String c : candidates) {
            int d = distance(word, c);
            if (d < bestD) {
                bestD = d;
                best = c;
            }
        }
        return best != null && bestD <= Math.max(2, word.length() / 3) ? best : null;
    }

    /** " (did you mean 'x'?)" or "". */
    static String hint(String word, Collection<String> candidates) {
        String c = closest(word, candidates);
        return c == null ? "" : "; did you mean '" + c + "'?";
    }

    /** Levenshtein distance (insert, delete, substitute; transposition counts 2). */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
