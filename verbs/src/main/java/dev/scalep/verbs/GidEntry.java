package dev.scalep.verbs;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One entry of a port's GID table ({@code struct ibv_gid_entry}).
 *
 * @param index   the GID index ({@code sgid_index} of an address vector)
 * @param gid     the 16-byte GID
 * @param type    what packets sent from it carry
 */
public record GidEntry(int index, byte[] gid, GidType type) {
    public GidEntry {
        gid = gid.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** An IPv4-mapped GID ({@code ::ffff:a.b.c.d}): the RoCE v2 address of an IPv4 interface. */
    public boolean ipv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return false;
            }
        }
        return gid[10] == (byte) 0xff && gid[11] == (byte) 0xff;
    }

    /** A link-local GID ({@code fe80::/10}), the default GID of every port. */
    public boolean linkLocal() {
        return gid[0] == (byte) 0xfe && (gid[1] & 0xc0) == 0x80;
    }

    /** The GID in IPv6 text form ({@code fe80::...}, {@code ::ffff:10.0.0.1}). */
    public String address() {
        try {
            if (ipv4Mapped()) {
                return "::ffff:" + InetAddress.getByAddress(Arrays.copyOfRange(gid, 12, 16)).getHostAddress();
            }
            return InetAddress.getByAddress(gid).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // 4 or 16 bytes are always an address
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GidEntry e && e.index == index && e.type == type && Arrays.equals(e.gid, gid);
    }

    @Override
    public int hashCode() {
        return index * 31 + Arrays.hashCode(gid);
    }

    @Override
    public String toString() {
        return index + ": " + address() + " " + type.spelling();
    }

    /** Index, address and type as a map (for JSON). */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("index", index);
        m.put("gid", address());
        m.put("type", type.spelling());
        return m;
    }
}
