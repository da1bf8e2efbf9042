package dev.scalep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.PortInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code scalep devices}: every device with its capabilities. */
@Command(name = "devices", mixinStandardHelpOptions = true,
        description = "List the devices scalep can open (simulated and real) with their capabilities.")
final class DevicesCommand implements Callable<Integer> {
    @Option(names = "--json", description = "Print a JSON array: name, provider, kind, capabilities and ports (state, MTU, link layer, LID, GID table) per device.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        List<Device> devices = Devices.all();
        if (json) {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Device d : devices) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("name", d.name());
                m.put("provider", d.provider());
                m.put("kind", d.kind().name().toLowerCase());
                m.put("default", d.name().equals(Devices.DEFAULT));
                m.put("capabilities", d.capabilities().toMap());
                m.put("ports", d.ports().stream().map(PortInfo::toMap).toList());
                out.add(m);
            }
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(out));
            return 0;
        }
        System.out.printf("%-12s %-8s %-5s %-9s %-7s %-6s %-5s %s%n",
                "DEVICE", "PROVIDER", "KIND", "QP TYPES", "MAX WR", "INLINE", "TDS", "FEATURES");
        for (Device d : devices) {
            DeviceCapabilities c = d.capabilities();
            List<String> f = new ArrayList<>();
            if (c.rdmaWrite()) {
                f.add("write");
            }
            if (c.writeWithImm()) {
                f.add("write-imm");
            }
            if (c.rdmaRead()) {
                f.add("read");
            }
            if (c.unsignaled()) {
                f.add("unsignaled");
            }
            if (c.blueFlame()) {
                f.add("blueflame");
            }
            if (c.maxSrq() > 0) {
                f.add("srq");
            }
            f.add(c.inOrder() ? "in-order" : "out-of-order");
            System.out.printf("%-12s %-8s %-5s %-9s %-7d %-6d %-5s %s%n", d.name(), d.provider(),
                    d.kind().name().toLowerCase(), String.join(",", c.qpTypes().stream().map(Enum::name).sorted().toList()),
                    c.maxQpWr(), c.maxInline(), c.threadDomains() ? "yes" : "no", String.join(" ", f));
        }
        printPorts(devices);
        System.out.println();
        System.out.println("default device: " + Devices.DEFAULT + " (simulated; moves real bytes in this process)");
        for (Map.Entry<String, String> e : Devices.unavailable().entrySet()) {
            System.out.println(e.getKey() + ": " + e.getValue());
        }
        return 0;
    }

    /** Each device's ports: state, active (and largest) MTU, link layer, LID, and the GID table. */
    private static void printPorts(List<Device> devices) {
        System.out.println();
        System.out.printf("%-12s %-4s %-8s %-11s %-11s %-5s %s%n", "DEVICE", "PORT", "STATE", "MTU (MAX)", "LINK",
                "LID", "GIDS");
        for (Device d : devices) {
            for (PortInfo p : d.ports()) {
                List<GidEntry> gids = p.gids();
                System.out.printf("%-12s %-4d %-8s %-11s %-11s %-5d %s%n", d.name(), p.port(), p.state(),
                        p.activeMtu() + " (" + p.maxMtu() + ")", p.linkLayer(), p.lid(),
                        gids.isEmpty() ? "none" : gids.getFirst());
                for (int i = 1; i < gids.size(); i++) {
                    System.out.printf("%-12s %-4s %-8s %-11s %-11s %-5s %s%n", "", "", "", "", "", "", gids.get(i));
                }
            }
        }
    }
}
