package dev.scalep.policies;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shipped JSON Schema and the loader accept and reject the same files. */
@Timeout(30)
class SchemaAgreementTest {
    static JsonSchema schema;
    static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void loadSchema() throws Exception {
        try (InputStream in = PolicyLoader.class.getResourceAsStream("/dev/scalep/policies/policy.schema.json")) {
            assertNotNull(in, "schema resource");
            schema = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(in);
        }
    }

    static Set<ValidationMessage> schemaErrors(String yaml) {
        Object tree = new Load(LoadSettings.builder().build()).loadFromString(yaml);
        JsonNode node = JSON.valueToTree(tree);
        return schema.validate(node);
    }

    static boolean loaderAccepts(String yaml) {
        try {
            PolicyLoader.parse("t.yaml", yaml);
            return true;
        } catch (PolicyException e) {
            return false;
        }
    }

    static List<String> catalog() {
        return PolicyLoader.CATALOG;
    }

    @ParameterizedTest
    @MethodSource("catalog")
    void bothAcceptEveryCatalogFile(String name) throws Exception {
        String yaml = Files.readString(Path.of("catalog", name + ".yaml"));
        assertTrue(loaderAccepts(yaml));
        assertEquals(Set.of(), schemaErrors(yaml));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "classes:\n  a: {}\n",
            "version: 1\ndescription: d\nclasses:\n  a: {sharing: \"ctx=shared, td=paired, qp=4way:combining, cq=per-qp, buf=per-thread\"}\n",
            "classes:\n  a: {sharing: mpi-threads, srd: {ordering: sender-wait}, cq: {moderation: {count: 0}}}\n  b: {extends: a}\n",
            "classes:\n  a: {connection: {port: 2, gid-index: 3, path-mtu: 1024, timeout: 18, retry-count: 5, rnr-retry: 3, min-rnr-timer: 12, max-rd-atomic: 4, max-dest-rd-atomic: 8, service-level: 3, traffic-class: 106, hop-limit: 32}}\n",
            "classes:\n  a: {connection: {gid-type: roce-v2, address-family: ipv4}}\n",
    })
    void bothAcceptGoodFiles(String yaml) {
        assertTrue(loaderAccepts(yaml), yaml);
        assertEquals(Set.of(), schemaErrors(yaml), yaml);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "classes: {}\n",
            "version: 2\nclasses:\n  a: {}\n",
            "classes:\n  a: {postlst: 32}\n",
            "classes:\n  a: {postlist: \"32\"}\n",
            "classes:\n  a: {postlist: 0}\n",
            "classes:\n  a: {postlist: 99999999999999999999}\n",
            "classes:\n  a: {inline: 1.5}\n",
            "classes:\n  a: {blueflame: true}\n",
            "classes:\n  a: {blueflame: sometimes}\n",
            "classes:\n  a: {sharing: dynamc}\n",
            "classes:\n  a: {sharing: \"ctx=shared,qp=4wy\"}\n",
            "classes:\n  a: {sharing: \"td=independent\"}\n",
            "classes:\n  a: {chained: {enabled: yes}}\n",
            "classes:\n  a: {srq: {depth: 0}}\n",
            "classes:\n  a: {cq: {moderation: {period-us: 70000}}}\n",
            "classes:\n  a: {srd: {ordering: fifo}}\n",
            "classes:\n  a: {on-unsupported: ignore}\n",
            "classes:\n  Bad: {}\n",
            "classes:\n  a: 3\n",
            "classes:\n  a: {extends: 3}\n",
            "extra: 1\nclasses:\n  a: {}\n",
            "description: 5\nclasses:\n  a: {}\n",
            "- a\n",
            "classes:\n  a: {connection: {path-mtu: 1500}}\n",
            "classes:\n  a: {connection: {path-mtu: 8192}}\n",
            "classes:\n  a: {connection: {timeout: 32}}\n",
            "classes:\n  a: {connection: {retry-count: 8}}\n",
            "classes:\n  a: {connection: {gid-type: roce-v3}}\n",
            "classes:\n  a: {connection: {hop-limit: 0}}\n",
            "classes:\n  a: {connection: {gid-index: 256}}\n",
            "classes:\n  a: {connection: {mtu: 1024}}\n",
    })
    void bothRejectBadFiles(String yaml) {
        assertFalse(loaderAccepts(yaml), yaml);
        assertFalse(schemaErrors(yaml).isEmpty(), yaml);
    }

    @Test
    void schemaIsDraft202012WithAllClassKeys() throws Exception {
        JsonNode s;
        try (InputStream in = PolicyLoader.class.getResourceAsStream("/dev/scalep/policies/policy.schema.json")) {
            s = JSON.readTree(in);
        }
        assertEquals("https://json-schema.org/draft/2020-12/schema", s.get("$schema").asText());
        JsonNode props = s.at("/$defs/class/properties");
        for (String k : List.of("extends", "sharing", "queue-depth", "postlist", "unsignaled", "inline", "blueflame",
                "chained", "sge-header-payload", "srq", "cq", "srd", "connection", "on-unsupported")) {
            assertTrue(props.has(k), k);
        }
        assertEquals(32, props.at("/postlist/default").asInt());
        assertEquals(EndpointClass.DEFAULT_POSTLIST, props.at("/postlist/default").asInt());
        assertEquals(EndpointClass.DEFAULT_UNSIGNALED, props.at("/unsignaled/default").asInt());
        assertEquals(EndpointClass.DEFAULT_QUEUE_DEPTH, props.at("/queue-depth/default").asInt());
        assertEquals(EndpointClass.DEFAULT_INLINE, props.at("/inline/default").asInt());
        var c = dev.scalep.verbs.ConnectionOptions.DEFAULTS;
        JsonNode k = props.at("/connection/properties");
        assertEquals(c.port(), k.at("/port/default").asInt());
        assertEquals(c.minRnrTimer(), k.at("/min-rnr-timer/default").asInt());
        assertEquals(c.timeout(), k.at("/timeout/default").asInt());
        assertEquals(c.retryCount(), k.at("/retry-count/default").asInt());
        assertEquals(c.rnrRetry(), k.at("/rnr-retry/default").asInt());
        assertEquals(c.serviceLevel(), k.at("/service-level/default").asInt());
        assertEquals(c.trafficClass(), k.at("/traffic-class/default").asInt());
        assertEquals(c.hopLimit(), k.at("/hop-limit/default").asInt());
    }
}
