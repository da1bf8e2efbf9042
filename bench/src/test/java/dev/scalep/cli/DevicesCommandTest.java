package dev.scalep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code scalep devices}: every device with its ports, their state, MTU, link layer and GID table. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DevicesCommandTest {
    @Test
    void jsonListsPortsAndGids() throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("devices", "--json");
        assertEquals(0, r.rc(), r.err());
        JsonNode mlx5 = null;
        for (JsonNode d : new ObjectMapper().readTree(r.out())) {
            assertTrue(d.get("ports").isArray(), d.toString());
            if (d.get("name").asText().equals("sim:mlx5")) {
                mlx5 = d;
            }
        }
        assertNotNull(mlx5, r.out());
        JsonNode p = mlx5.get("ports").get(0);
        assertEquals(1, p.get("port").asInt());
        assertEquals("active", p.get("state").asText());
        assertEquals(4096, p.get("activeMtu").asInt());
        assertEquals("ethernet", p.get("linkLayer").asText());
        assertEquals(2, p.get("gids").size());
        assertEquals("roce-v2", p.get("gids").get(1).get("type").asText());
        assertTrue(p.get("gids").get(0).get("gid").asText().startsWith("fe80:"), p.toString());
        assertEquals(16, mlx5.get("capabilities").get("maxQpRdAtom").asInt());
    }

    @Test
    void tableShowsEachPort() {
        SweepCommandTest.Run r = SweepCommandTest.run("devices");
        assertEquals(0, r.rc(), r.err());
        assertTrue(r.out().contains("PORT"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("sim:efa") && l.contains("active")
                && l.contains("4096 (4096)") && l.contains("unspecified") && l.contains("0: fe80:")), r.out());
    }
}
