package dev.scalep.bench;

import java.util.Arrays;

/** Median and spread of repeated measurements. */
public record Stats(int n, double median, double min, double max, double mad) {

    public static Stats of(double[] values) {
        if (values.length == 0) {
            return new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        double[] v = values.clone();
        Arrays.sort(v);
        double med = median(v);
        double[] dev = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            dev[i] = Math.abs(v[i] - med);
        }
        Arrays.sort(dev);
        return new Stats(v.length, med, v[0], v[v.length - 1], median(dev));
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Spread as a percentage of the median: (max - min) / median. */
    public double spreadPercent() {
        return median == 0 ? 0 : (max - min) / median * 100;
    }
}
