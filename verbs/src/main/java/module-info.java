/**
 * The verbs object model (devices, contexts, protection domains, queue pairs, completion queues,
 * memory regions) and its two providers: the simulator ({@code sim:*}) and libibverbs through FFM.
 * Applications use {@code dev.scalep.verbs} only; the providers are loaded as services. This is the
 * module that calls native code: run with {@code --enable-native-access=dev.scalep.verbs} on the
 * module path ({@code ALL-UNNAMED} on the class path).
 */
@SuppressWarnings({"module", "requires-automatic"}) // qualified exports name modules built later; Agrona is automatic
module dev.scalep.verbs {
    requires org.agrona.core;
    // Agrona is an automatic module and uses sun.misc.Unsafe; nothing else would put jdk.unsupported
    // in an application's module graph.
    requires jdk.unsupported;
    // JFR events of the control path (dev.scalep.verbs.counters.Events).
    requires jdk.jfr;

    exports dev.scalep.verbs;
    // Internals: the FFM bindings are shared with the modules that bind their own native libraries,
    // and with the endpoints for the views of mapped windows (Native.view: reinterpret is restricted).
    exports dev.scalep.verbs.ffm to dev.scalep.spmd, dev.scalep.threading, dev.scalep.endpoints;
    // Runtime counters and control-path JFR events: used by the layers above; jdk.jfr reads the events.
    exports dev.scalep.verbs.counters to dev.scalep.spmd, dev.scalep.threading, dev.scalep.endpoints, jdk.jfr;

    uses dev.scalep.verbs.VerbsProvider;
    provides dev.scalep.verbs.VerbsProvider with dev.scalep.verbs.sim.SimProvider, dev.scalep.verbs.ibv.IbvProvider;
}
