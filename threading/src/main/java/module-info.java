/**
 * Send paths (exclusive, locked, combining, chained), completion routing and thread pinning: the
 * machinery under an endpoint. Internal to the endpoint layer: nothing here is exported to
 * applications.
 */
@SuppressWarnings({"module", "requires-automatic"}) // the qualified export names a module built later; Agrona is automatic
module dev.scalep.threading {
    requires dev.scalep.verbs;
    requires org.jctools.core;
    requires org.agrona.core;

    exports dev.scalep.threading to dev.scalep.endpoints;
}
