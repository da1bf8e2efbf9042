package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;

/** Turns a failed verb into the exception the API promises. */
final class Check {
    private Check() {
    }

    /** A {@link VerbsException}, or {@link UnsupportedFeatureException} for EOPNOTSUPP/ENOSYS. */
    static VerbsException fail(String verb, int errno, String device, String feature, String detail) {
        if (errno == Errno.EOPNOTSUPP || errno == Errno.ENOSYS) {
            return new UnsupportedFeatureException(verb, device, feature);
        }
        return new VerbsException(verb, errno, device, detail);
    }

    static VerbsException fail(String verb, int errno, String device, String detail) {
        return fail(verb, errno, device, verb, detail);
    }

    /** EBUSY naming the live children that keep {@code what} from being destroyed. */
    static VerbsException busy(String verb, String device, String what, Iterable<?> children) {
        StringBuilder sb = new StringBuilder(what).append(" still has live children: ");
        boolean first = true;
        for (Object c : children) {
            sb.append(first ? "" : ", ").append(c);
            first = false;
        }
        return new VerbsException(verb, Errno.EBUSY, device, sb.toString());
    }
}
