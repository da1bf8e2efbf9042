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

    /**
     * Peer {@code i}'s address handles and buffers. On connectionless QPs destination {@code i} of
     * QP {@code k} is the peer's QP {@code k}, and destination {@code peers + i * Q + j} its QP
     * {@code j} (Q QPs; the same address handle, another QPN), which a message to another thread
     * slot names ({@link Endpoint#stageMessageToQp}).
     */
    static void wire(EndpointManager m, int i, ManagerAddress remote) {
        if (m.qpType.connectionless()) {
            int qs = m.qps.size();
            for (int k = 0; k < qs; k++) {
                QueuePair qp = m.qps.get(k);
                AddressHandle ah = qp.pd().createAh(remote.qps().get(k));
                m.ahs.add(ah);
                m.paths.get(k).peer(i, ah, remote.qps().get(k).qpn(), QueuePair.QKEY);
                for (int j = 0; j < qs; j++) {
                    m.paths.get(k).peer(m.peers + i * qs + j, ah, remote.qps().get(j).qpn(), QueuePair.QKEY);
                }
            }
        }
        for (int t = 0; t < m.threads(); t++) {
            m.endpoints[t].peer(i, remote.target()[t], remote.send()[t], remote.rkey()[t], remote.bufferBytes());
            m.endpoints[t].destinationQps(m.qpType.connectionless() ? m.qps.size() : 0);
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
