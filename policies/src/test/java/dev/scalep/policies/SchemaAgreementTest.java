package dev.scalep.policies;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.scalep.verbs.ConnectionOptions;
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
import java.util.ArrayList;
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

    static JsonNode schemaTree() throws Exception {
        try (InputStream in = PolicyLoader.class.getResourceAsStream("/dev/scalep/policies/policy.schema.json")) {
            return JSON.readTree(in);
        }
    }

    /** The schema node of a dotted key path under {@code props} (sections are objects with properties). */
    static JsonNode node(JsonNode props, String path) {
        JsonNode n = props;
        String[] parts = path.split("\\.");
        for (int i = 0; i < parts.length; i++) {
            n = n.get(parts[i]);
            if (n == null) {
                return null;
            }
            if (i < parts.length - 1) {
                n = n.get("properties");
            }
        }
        return n;
    }

    /** Every key the schema declares under {@code props}, as dotted paths of leaves. */
    static void leaves(JsonNode props, String prefix, List<String> out) {
        props.fieldNames().forEachRemaining(name -> {
            JsonNode n = props.get(name);
            if (n.has("properties")) {
                leaves(n.get("properties"), prefix + name + ".", out);
            } else {
                out.add(prefix + name);
            }
        });
    }

    @Test
    void schemaIsDraft202012() throws Exception {
        assertEquals("https://json-schema.org/draft/2020-12/schema", schemaTree().get("$schema").asText());
    }

    /** Each key of the table, with its type, range, spellings, default and description, is the schema's, and nothing more. */
    @Test
    void everyKeyOfTheTableIsTheSchemasAndNoOther() throws Exception {
        JsonNode s = schemaTree();
        check(s.at("/properties"), PolicyKeys.TOP, List.of("classes"));
        check(s.at("/$defs/class/properties"), PolicyKeys.CLASS, List.of());
        for (String section : PolicyKeys.sections()) {
            JsonNode n = node(s.at("/$defs/class/properties"), section);
            assertEquals("object", n.get("type").asText(), section);
            assertFalse(n.get("additionalProperties").asBoolean(true), section + " refuses unknown keys");
        }
    }

    static void check(JsonNode props, List<PolicyKey<?>> keys, List<String> structural) {
        List<String> inSchema = new ArrayList<>();
        leaves(props, "", inSchema);
        List<String> inTable = new ArrayList<>(keys.stream().map(PolicyKey::path).toList());
        inTable.addAll(structural);
        assertEquals(inTable, inSchema, "the same keys in the same order");
        for (PolicyKey<?> k : keys) {
            JsonNode n = node(props, k.path());
            String p = k.path();
            switch (k.type()) {
                case INT -> {
                    if (k.spellings().isEmpty()) {
                        if (k.min() == k.max()) {
                            assertEquals(k.min(), n.get("const").asLong(), p);
                        } else {
                            assertEquals("integer", n.get("type").asText(), p);
                            assertEquals(k.min(), n.get("minimum").asLong(), p);
                            assertEquals(k.max(), n.get("maximum").asLong(), p);
                        }
                    } else {
                        List<String> e = new ArrayList<>();
                        n.get("enum").forEach(x -> e.add(x.asText()));
                        assertEquals(k.spellings(), e, p);
                        n.get("enum").forEach(x -> assertTrue(x.isInt(), p + " enumerates integers"));
                    }
                }
                case BOOL -> assertEquals("boolean", n.get("type").asText(), p);
                case ENUM -> {
                    List<String> e = new ArrayList<>();
                    n.get("enum").forEach(x -> e.add(x.asText()));
                    assertEquals(k.spellings(), e, p);
                }
                case STRING, SHARING -> {
                    assertEquals("string", n.get("type").asText(), p);
                    assertEquals(k.max(), n.get("maxLength").asLong(), p);
                }
                case NAME -> {
                    assertEquals("string", n.get("type").asText(), p);
                    assertEquals("^" + PolicyLoader.CLASS_NAME.pattern() + "$", n.get("pattern").asText(), p);
                }
            }
            Object d = k.schemaDefault();
            if (d == null) {
                assertFalse(n.has("default"), p + ": the default depends on other keys or the device, so the schema gives none");
            } else {
                assertEquals(String.valueOf(d), n.path("default").asText(null), p);
            }
            assertTrue(n.has("description"), p + " is described");
            assertEquals(k.description(), n.get("description").asText(), p);
        }
    }

    @Test
    void defaultsAreTheTables() {
        EndpointClass d = EndpointClass.defaults("x");
        for (PolicyKey<?> k : PolicyKeys.CLASS) {
            if (k.isSetting() && k.schemaDefault() != null) {
                assertEquals(String.valueOf(k.schemaDefault()), k.spelledIn(d), k.path());
            }
        }
        assertEquals(32, EndpointClass.DEFAULT_POSTLIST);
        assertEquals(ConnectionOptions.DEFAULTS, d.connection());
    }
}
