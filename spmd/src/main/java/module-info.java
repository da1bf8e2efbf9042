/**
 * SPMD jobs: a {@link dev.scalep.spmd.World} of ranks (a single process, local child processes or a
 * job launched through PMIx, PMI-2 or PMI-1) with its bootstrap exchange. The native bindings
 * ({@code dev.scalep.spmd.ffm}: PMIx, and libc read/write on the PMI_FD socket) are internal; it reads native memory, so this module needs native access too on the module path
 * ({@code --enable-native-access=dev.scalep.verbs,dev.scalep.spmd}).
 */
module dev.scalep.spmd {
    requires dev.scalep.verbs;

    exports dev.scalep.spmd;
}
