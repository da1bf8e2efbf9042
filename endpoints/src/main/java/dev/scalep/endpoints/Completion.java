package dev.scalep.endpoints;

import dev.scalep.threading.RoutedCompletion;

/**
 * One completion of an {@link Endpoint}: a holder the application allocates once and passes to
 * every {@link Endpoint#poll(Completion)} (nothing is allocated per completion). {@code wrId()} is
 * the id the application gave a send request, or the receive slot a receive filled; {@code ok()}
 * tells success, {@code status()} the {@link dev.scalep.verbs.WcStatus} otherwise (then only
 * {@code wrId()}, {@code status()} and {@code isRecv()} are meaningful, and the endpoint's QP has
 * stopped: {@link Endpoint#qpState()}); {@code opcode()} is a {@link dev.scalep.verbs.WcOpcode},
 * {@code byteLen()} the bytes received, {@code imm()} the immediate data when {@code hasImm()}.
 * Not thread-safe.
 */
public final class Completion extends RoutedCompletion {
    public Completion() {
    }
}
