package dev.scalep.verbs.sim;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.VerbsProvider;

import java.util.List;

/** The always-present provider of the simulated devices {@code sim:mlx5} and {@code sim:efa}. */
public final class SimProvider implements VerbsProvider {
    @Override
    public String name() {
        return "sim";
    }

    @Override
    public List<Device> devices() {
        return List.of(SimDevice.mlx5(), SimDevice.efa());
    }

    @Override
    public String unavailableReason() {
        return null;
    }
}
