package dev.scalep.verbs.sim;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.VerbsException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static dev.scalep.verbs.sim.FabricLayout.MAX_FILES;
import static dev.scalep.verbs.sim.FabricLayout.MAX_PROCS;

/**
 * Memory other processes can map: this process's PD allocations (one new 0600 file in the user's
 * private directory each, {@code base@p<slot>e<epoch>m<n>}, created with {@code O_EXCL|O_NOFOLLOW}, mapped into the PD's arena and deleted with the
 * PD) and the mappings of peers' files, opened on first use by an initiator and kept until this
 * process leaves the fabric. File numbers are never reused while joined, so a cached mapping never
 * names another allocation.
 */
final class SharedMemory {
    /** One allocation: its file number, where it is mapped here, and its file. */
    record Allocation(int fileNo, MemorySegment segment, Path file) {
    }

    private final Fabric fabric;
    private final Arena peerArena = Arena.ofShared();
    private final ConcurrentSkipListMap<Long, Allocation> own = new ConcurrentSkipListMap<>();
    @SuppressWarnings("unchecked")
    private final AtomicReferenceArray<MemorySegment>[] peers = new AtomicReferenceArray[MAX_PROCS];
    private final int[] peerEpoch = new int[MAX_PROCS];
    private int nextFile;

    SharedMemory(Fabric fabric) {
        this.fabric = fabric;
    }

    private Path file(int p, int epoch, int fileNo) {
        return fabric.dir.resolve(Fabric.fileName(fabric.base, p, epoch, fileNo));
    }

    /**
     * The memory of a mapping as a plain native segment of the same scope ({@code arena}'s, which
     * unmaps it): the data path then sees one {@link MemorySegment} implementation class, whatever
     * it reaches (arena memory, this process's shared files, peers' files). A mapped segment is a
     * class of its own, and a segment access or {@link MemorySegment#copy} that has seen two or
     * three classes is compiled with type checks or virtual calls that keep its bounds checks in
     * the loop, depending on which class the JIT saw first (docs/ARCHITECTURE.md, "One speed").
     */
    static MemorySegment plain(MemorySegment mapped, Arena arena) {
        return MemorySegment.ofAddress(mapped.address()).reinterpret(mapped.byteSize(), arena, null);
    }

    /** A page-aligned shared allocation of at least {@code size} bytes, mapped into {@code arena}. */
    synchronized Allocation allocate(long size, long alignment, Arena arena) {
        String dev = fabric.deviceName;
        if (size <= 0 || alignment <= 0 || Long.bitCount(alignment) != 1 || alignment > 4096) {
            throw new VerbsException("ibv_alloc_pd_memory", Errno.EINVAL, dev,
                    "size=" + size + " must be positive and alignment=" + alignment + " a power of two up to 4096");
        }
        if (nextFile >= MAX_FILES) {
            throw new VerbsException("ibv_alloc_pd_memory", Errno.ENOMEM, dev,
                    "max shared allocations per process=" + MAX_FILES);
        }
        int no = nextFile++;
        Path f = file(fabric.slot, fabric.epoch, no);
        long bytes = (size + 4095) & -4096L;
        ShmFile.Opened o;
        try {
            o = ShmFile.open(f, true, true, fabric.uid); // a new file, never a link or a planted one
        } catch (ShmFile.Refused e) {
            throw new VerbsException("ibv_alloc_pd_memory", e.errno, dev, e.getMessage()
                    + "; choose another job name with SCALEP_JOB=<name>");
        } catch (IOException e) {
            throw new VerbsException("ibv_alloc_pd_memory", Errno.ENOMEM, dev, "cannot create " + f + ": " + e);
        }
        try (FileChannel ch = o.channel()) {
            ch.write(ByteBuffer.wrap(new byte[1]), bytes - 1);
            MemorySegment seg = plain(ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena), arena).asSlice(0, size);
            Allocation a = new Allocation(no, seg, f);
            own.put(seg.address(), a);
            return a;
        } catch (IOException e) {
            deleteQuietly(f);
            throw new VerbsException("ibv_alloc_pd_memory", Errno.ENOMEM, dev, "cannot create " + f + ": " + e);
        }
    }

    private static void deleteQuietly(Path f) {
        try {
            Files.deleteIfExists(f);
        } catch (IOException ignored) {
            // reclaimed with the process entry at the next open
        }
    }

    /** Forget and delete an allocation (its PD's arena unmaps it). */
    void free(Allocation a) {
        own.remove(a.segment().address(), a);
        try {
            Files.deleteIfExists(a.file());
        } catch (IOException ignored) {
            // reclaimed with the process entry at the next open
        }
    }

    /** The allocation that contains {@code [address, address + length)}, or null. */
    Allocation find(long address, long length) {
        Map.Entry<Long, Allocation> e = own.floorEntry(address);
        if (e == null) {
            return null;
        }
        MemorySegment s = e.getValue().segment();
        return address - s.address() <= s.byteSize() - length ? e.getValue() : null;
    }

    /**
     * Peer p's file {@code fileNo}, mapped here (first use opens and maps it; later uses are one
     * array read). Null when the file is gone, is not the user's 0600 file, or p left.
     */
    MemorySegment peer(int p, int fileNo) {
        int epoch = fabric.epochOf(p);
        AtomicReferenceArray<MemorySegment> row = peers[p];
        if (row != null && peerEpoch[p] == epoch) {
            MemorySegment m = row.get(fileNo);
            if (m != null) {
                return m;
            }
        }
        return mapPeer(p, epoch, fileNo);
    }

    private synchronized MemorySegment mapPeer(int p, int epoch, int fileNo) {
        if (peers[p] == null || peerEpoch[p] != epoch) {
            peers[p] = new AtomicReferenceArray<>(MAX_FILES);
            peerEpoch[p] = epoch;
        }
        MemorySegment m = peers[p].get(fileNo);
        if (m != null) {
            return m;
        }
        Path f = file(p, epoch, fileNo);
        try (FileChannel ch = ShmFile.open(f, false, false, fabric.uid).channel()) { // links refused, checked
            m = plain(ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size(), peerArena), peerArena);
            peers[p].set(fileNo, m);
            return m;
        } catch (ShmFile.Refused | IOException | RuntimeException e) {
            return null;
        }
    }

    /** Unmap every peer mapping and delete this process's remaining files. */
    void close() {
        for (Allocation a : own.values()) {
            free(a);
        }
        peerArena.close();
    }
}
