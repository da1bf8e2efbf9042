package dev.scalep.policies;

/**
 * Settings that matter only on devices that deliver out of order (EFA SRD).
 *
 * @param ordering         how ordering is restored in software
 * @param atomicsEmulation whether atomics are emulated in software (SRD has no native atomics)
 */
public record SrdSettings(Ordering ordering, boolean atomicsEmulation) {
}
