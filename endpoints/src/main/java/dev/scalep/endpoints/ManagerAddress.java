package dev.scalep.endpoints;

import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpType;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What another process needs to reach one endpoint manager, as real devices exchange it out of
 * band: the transport, the address of every QP ({@link QpAddress}) and every endpoint's buffers
 * (target and send buffer address, rkey, length). {@link #toBytes()} and {@link #parse(byte[])}
 * carry it through a world's all-gather; a malformed entry is refused with what was wrong.
 */
record ManagerAddress(QpType qpType, List<QpAddress> qps, long[] target, long[] send, int[] rkey, int bufferBytes) {
    private static final int MAGIC = 0x53434d41; // "SCMA"
    private static final int MAX_QPS = 1 << 16;

    int threads() {
        return target.length;
    }

    static ManagerAddress of(EndpointManager m) {
        List<QpAddress> qps = new ArrayList<>();
        m.qps.forEach(q -> qps.add(q.address()));
        int n = m.threads();
        long[] target = new long[n];
        long[] send = new long[n];
        int[] rkey = new int[n];
        for (int t = 0; t < n; t++) {
            Endpoint e = m.endpoints[t];
            target[t] = e.targetAddress();
            send[t] = e.sendAddress();
            rkey[t] = e.rkey();
        }
        return new ManagerAddress(m.qpType, qps, target, send, rkey, m.options().bufferBytes());
    }

    byte[] toBytes() {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (DataOutputStream o = new DataOutputStream(bo)) {
            o.writeInt(MAGIC);
            o.writeUTF(qpType.name());
            o.writeInt(bufferBytes);
            o.writeInt(qps.size());
            for (QpAddress a : qps) {
                byte[] q = a.toBytes();
                o.writeShort(q.length);
                o.write(q);
            }
            o.writeInt(target.length);
            for (int t = 0; t < target.length; t++) {
                o.writeLong(target[t]);
                o.writeLong(send[t]);
                o.writeInt(rkey[t]);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bo.toByteArray();
    }

    static ManagerAddress parse(byte[] b) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            if (in.readInt() != MAGIC) {
                throw new IllegalArgumentException("not a scalep endpoint address (bad magic)");
            }
            QpType type = QpType.valueOf(in.readUTF());
            int bufferBytes = in.readInt();
            int nq = in.readInt();
            if (nq < 0 || nq > MAX_QPS) {
                throw new IllegalArgumentException("endpoint address with " + nq + " QPs");
            }
            List<QpAddress> qps = new ArrayList<>(nq);
            for (int k = 0; k < nq; k++) {
                int len = in.readUnsignedShort();
                if (len > in.available()) {
                    throw new IllegalArgumentException("truncated endpoint address: QP " + k + " of " + nq);
                }
                qps.add(QpAddress.fromBytes(in.readNBytes(len)));
            }
            int n = in.readInt();
            if (n < 0 || n > MAX_QPS) {
                throw new IllegalArgumentException("endpoint address with " + n + " endpoints");
            }
            long[] target = new long[n];
            long[] send = new long[n];
            int[] rkey = new int[n];
            for (int t = 0; t < n; t++) {
                target[t] = in.readLong();
                send[t] = in.readLong();
                rkey[t] = in.readInt();
            }
            if (in.available() != 0) {
                throw new IllegalArgumentException(in.available() + " trailing bytes");
            }
            return new ManagerAddress(type, qps, target, send, rkey, bufferBytes);
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated endpoint address: " + e.getMessage(), e);
        }
    }
}
