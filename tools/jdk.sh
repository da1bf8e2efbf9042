# Sourced by ./scalep, ./run-tests and bench/compare-ucx: finds a JDK the build accepts and exports JAVA_HOME.
# The version needed is read from the root pom.xml (maven.compiler.release, which the build's enforcer
# rule also uses), so it is written in one place. Order: $JAVA_HOME, `java` on PATH, then the JDKs
# under /usr/lib/jvm (newest first).

# The feature version the build compiles for, from pom.xml next to this directory.
scalep_required_jdk() {
    local pom
    pom="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/pom.xml"
    sed -n 's|^ *<maven.compiler.release>\([0-9]*\)</maven.compiler.release>.*|\1|p' "$pom" | head -n1
}

scalep_java_version() { # prints the feature version of the java binary $1, or nothing
    "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}

scalep_find_jdk() {
    local min cand v
    min=$(scalep_required_jdk)
    if [ -z "$min" ]; then
        echo "scalep: cannot read maven.compiler.release from pom.xml" >&2
        return 1
    fi
    local tried=()
    for cand in "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java 2>/dev/null)" \
                $(ls -d /usr/lib/jvm/*/bin/java 2>/dev/null | sort -rV); do
        [ -n "$cand" ] && [ -x "$cand" ] || continue
        v=$(scalep_java_version "$cand")
        tried+=("$cand (${v:-unknown})")
        if [ -n "$v" ] && [ "$v" -ge "$min" ] && [ -x "$(dirname "$cand")/javac" ]; then
            JAVA_HOME=$(cd "$(dirname "$cand")/.." && pwd)
            SCALEP_JAVA_VERSION=$v
            export JAVA_HOME SCALEP_JAVA_VERSION
            # Maven's own libraries use sun.misc.Unsafe; JDK 23+ warns about it unless told. The flag is
            # unknown to older JDKs, so it goes here (for this JDK only), not into .mvn/jvm.config.
            if [ "$v" -ge 23 ] && [[ "${MAVEN_OPTS:-}" != *sun-misc-unsafe-memory-access* ]]; then
                export MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }--sun-misc-unsafe-memory-access=allow"
            fi
            return 0
        fi
    done
    {
        echo "scalep needs JDK $min or newer (the release pom.xml compiles for)."
        if [ ${#tried[@]} -gt 0 ]; then
            echo "Found only: ${tried[*]}"
        else
            echo "No java was found (JAVA_HOME unset, no java on PATH, nothing under /usr/lib/jvm)."
        fi
        echo "Install one, for example: apt-get install openjdk-$min-jdk-headless (or Temurin $min from adoptium.net),"
        echo "or point JAVA_HOME at an existing JDK $min or newer."
    } >&2
    return 1
}
