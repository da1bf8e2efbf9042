/**
 * Runtime counters readable from outside the process: Agrona counters over a per-process file
 * ({@link dev.scalep.verbs.counters.CountersFile}) in the user's private shared-memory directory,
 * allocated through {@link dev.scalep.verbs.counters.Counters}, and the JFR events of the control
 * path ({@link dev.scalep.verbs.counters.Events}).
 */
package dev.scalep.verbs.counters;
