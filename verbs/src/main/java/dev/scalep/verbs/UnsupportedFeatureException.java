package dev.scalep.verbs;

/** A verb failed with EOPNOTSUPP (or the capabilities say so): the device lacks a feature. */
public class UnsupportedFeatureException extends VerbsException {
    private final String feature;

    public UnsupportedFeatureException(String verb, String device, String feature) {
        super(verb, Errno.EOPNOTSUPP, device, feature + " is unsupported on this device");
        this.feature = feature;
    }

    /** The feature the device lacks, e.g. {@code thread domains}. */
    public String feature() {
        return feature;
    }
}
