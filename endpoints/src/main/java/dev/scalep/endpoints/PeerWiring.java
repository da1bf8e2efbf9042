package dev.scalep.endpoints;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.QueuePair;

/**
 * Brings a manager's QPs up against a remote manager's address ({@link ManagerAddress}), the same
 * way whether the remote is another manager in this process or one in another rank: address
 * handles and endpoint buffers per peer, then RESET → INIT → RTR, receives, RTS.
 */
final class PeerWiring {
    private PeerWiring() {
    }

    /** Peer {@code i}'s address handles (connectionless QPs, QP {@code k} to its QP {@code k}) and buffers. */
    static void wire(EndpointManager m, int i, ManagerAddress remote) {
        if (m.qpType.connectionless()) {
            for (int k = 0; k < m.qps.size(); k++) {
                QueuePair qp = m.qps.get(k);
                AddressHandle ah = qp.pd().createAh(remote.qps().get(k));
                m.ahs.add(ah);
                m.paths.get(k).peer(i, ah, remote.qps().get(k).qpn(), QueuePair.QKEY);
            }
        }
        for (int t = 0; t < m.threads(); t++) {
            m.endpoints[t].peer(i, remote.target()[t], remote.send()[t], remote.rkey()[t], remote.bufferBytes());
        }
    }

    /** INIT and RTR; an RC QP {@code k} is connected to the remote's QP {@code k}. */
    static void bringUp(EndpointManager m, ManagerAddress remote) {
        for (int k = 0; k < m.qps.size(); k++) {
            QueuePair qp = m.qps.get(k);
            qp.init(Access.ALL_RDMA | (qp.pd().context().capabilities().atomicCap().supported() ? Access.REMOTE_ATOMIC : 0));
            qp.readyToReceive(m.qpType.connectionless() ? null : remote.qps().get(k));
        }
    }

    static void finishBringUp(EndpointManager m) {
        for (QueuePair qp : m.qps) {
            qp.readyToSend(m.options().connection().retryCount(), m.options().connection().rnrRetry());
        }
    }
}
