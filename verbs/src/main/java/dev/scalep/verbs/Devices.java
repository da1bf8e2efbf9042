package dev.scalep.verbs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The device registry: every device of every provider, by name. The simulated devices are always
 * present; {@link #DEFAULT} is the embedded default.
 */
public final class Devices {
    /** The embedded default device. */
    public static final String DEFAULT = "sim:mlx5";

    private static volatile List<VerbsProvider> providers;

    private Devices() {
    }

    /** Every provider, the simulator first. */
    public static List<VerbsProvider> providers() {
        List<VerbsProvider> p = providers;
        if (p == null) {
            synchronized (Devices.class) {
                p = providers;
                if (p == null) {
                    List<VerbsProvider> found = new ArrayList<>();
                    var it = ServiceLoader.load(VerbsProvider.class, Devices.class.getClassLoader()).iterator();
                    while (true) {
                        try {
                            if (!it.hasNext()) {
                                break;
                            }
                            found.add(it.next());
                        } catch (ServiceConfigurationError | LinkageError e) {
                            // A provider that cannot load (e.g. a missing native dependency) is skipped,
                            // and says why through a stand-in with no devices.
                            found.add(new BrokenProvider(e.getMessage()));
                        }
                    }
                    found.sort((a, b) -> Boolean.compare(!a.name().equals("sim"), !b.name().equals("sim")));
                    providers = p = List.copyOf(found);
                }
            }
        }
        return p;
    }

    /** Every device, simulated ones first. */
    public static List<Device> all() {
        List<Device> out = new ArrayList<>();
        for (VerbsProvider p : providers()) {
            out.addAll(p.devices());
        }
        return out;
    }

    /** Providers with no devices, with the reason each gave. */
    public static Map<String, String> unavailable() {
        Map<String, String> m = new LinkedHashMap<>();
        for (VerbsProvider p : providers()) {
            if (p.devices().isEmpty() && p.unavailableReason() != null) {
                m.put(p.name(), p.unavailableReason());
            }
        }
        return m;
    }

    /** The device called {@code name}; {@link NoSuchDeviceException} listing the known names otherwise. */
    public static Device byName(String name) {
        List<Device> all = all();
        for (Device d : all) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        StringBuilder msg = new StringBuilder("no device named '").append(name).append("'. Known devices: ");
        msg.append(String.join(", ", all.stream().map(Device::name).toList())).append('.');
        for (Map.Entry<String, String> e : unavailable().entrySet()) {
            msg.append(" (").append(e.getKey()).append(": ").append(e.getValue()).append(')');
        }
        throw new NoSuchDeviceException(msg.toString());
    }

    /** Stands in for a provider that failed to load. */
    private record BrokenProvider(String reason) implements VerbsProvider {
        @Override
        public String name() {
            return "provider";
        }

        @Override
        public List<Device> devices() {
            return List.of();
        }

        @Override
        public String unavailableReason() {
            return "failed to load: " + reason;
        }
    }
}
