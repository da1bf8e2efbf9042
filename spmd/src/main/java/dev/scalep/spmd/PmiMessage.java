package dev.scalep.spmd;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A PMI reply as its tokens, by key: a PMI-1 line ({@code cmd=get_result rc=0 msg=success value=V},
 * space-separated) or a PMI-2 body ({@code cmd=kvs-get-response;rc=0;found=TRUE;value=V;}, where
 * {@code ;;} stands for a literal semicolon). Never read by position: launchers add, omit and
 * reorder keys (hydra omits {@code rc} on some replies and adds {@code msg}, MPICH 4.1 adds
 * {@code found}).
 */
record PmiMessage(String text, Map<String, String> fields) {
    /** Split a PMI-1 line into its {@code key=value} tokens (a token without '=' has an empty value). */
    static PmiMessage line(String line) {
        Map<String, String> f = new LinkedHashMap<>();
        for (String tok : line.strip().split("[ \t]+")) {
            if (!tok.isEmpty()) {
                int eq = tok.indexOf('=');
                f.putIfAbsent(eq < 0 ? tok : tok.substring(0, eq), eq < 0 ? "" : tok.substring(eq + 1));
            }
        }
        return new PmiMessage(line, f);
    }

    /** Split a PMI-2 body into its {@code key=value;} fields. */
    static PmiMessage frame(String body) {
        Map<String, String> f = new LinkedHashMap<>();
        StringBuilder field = new StringBuilder();
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c == ';' && i + 1 < body.length() && body.charAt(i + 1) == ';') {
                field.append(';');
                i++;
            } else if (c == ';') {
                add(f, field);
            } else {
                field.append(c);
            }
        }
        add(f, field);
        return new PmiMessage(body, f);
    }

    private static void add(Map<String, String> f, StringBuilder field) {
        if (!field.isEmpty()) {
            String s = field.toString();
            int eq = s.indexOf('=');
            f.putIfAbsent(eq < 0 ? s : s.substring(0, eq), eq < 0 ? "" : s.substring(eq + 1));
            field.setLength(0);
        }
    }

    String get(String key) {
        return fields.get(key);
    }

    /** The value of {@code key}, or a {@link PmiException} naming the reply and the server. */
    String require(String key, String where) {
        String v = fields.get(key);
        if (v == null) {
            throw new PmiException("the PMI server on " + where + " sent no " + key + " in '" + text + "'");
        }
        return v;
    }

    int requireInt(String key, String where) {
        String v = require(key, where);
        try {
            return Integer.parseInt(v.strip());
        } catch (NumberFormatException e) {
            throw new PmiException("the PMI server on " + where + " sent " + key + "=" + v + ", not a number, in '" + text + "'");
        }
    }

    /**
     * Check that this is the reply {@code cmd} and that its {@code rc}, when present, is 0; return it.
     * {@code request} names what was asked, for the message.
     */
    PmiMessage expect(String cmd, String request, String where) {
        String got = fields.get("cmd");
        if (!cmd.equals(got)) {
            throw new PmiException("the PMI server on " + where + " answered " + request + " with '" + text + "', not cmd=" + cmd);
        }
        String rc = fields.get("rc");
        if (rc != null && !rc.strip().equals("0")) {
            String msg = fields.getOrDefault("msg", fields.getOrDefault("errmsg", ""));
            throw new PmiException("the PMI server on " + where + " refused " + request + " with rc=" + rc
                    + (msg.isEmpty() ? "" : " (" + msg + ")"));
        }
        return this;
    }
}
