# Sourced by run and two-hosts (not executable): what the rxe VM runs share. Needs ROOT (the checkout).

# JDK 25 or newer for the guests (the host root is the guests' root, so the host's path works there).
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
[ -x "$JAVA_HOME/bin/java" ] && "$JAVA_HOME/bin/java" -version 2>&1 | grep -q '"2[5-9]' \
    || JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
KVER="${KVER:-$(ls /lib/modules | sort -V | tail -1)}"
KERNEL="/boot/vmlinuz-$KVER"
JAR="$ROOT/bench/target/scalep.jar"
# Guest paths travel on the kernel command line and in generated scripts: no white space in them.
case "$ROOT" in
    *[[:space:]]*) echo "the rxe VM cannot run from a checkout whose path has white space: $ROOT" >&2; exit 2 ;;
esac
# Scratch space in a guest: a tmpfs over /run, or over /mnt when the checkout lives under /run.
RXE_SCRATCH=/run
case "$ROOT/" in
    /run/*) RXE_SCRATCH=/mnt ;;
esac

# The two-rank sweep the one-guest job and the two-host job both run, so that their rates compare:
# 2-byte RDMA writes, 1 and 2 sender threads, a QP per thread and one locked shared QP. Small, since a
# TCG guest moves thousands of messages per second, not millions.
RXE_SWEEP="sweep --threads 1,2 --categories static,mpi-threads --messages 10000 --repeat 3 --no-progress"

# The java command line of an SPMD rank in a guest (client compiler only: JVM start-up dominates under TCG).
rxe_rank_java() { # $1: the guest's scratch directory for java.io.tmpdir
    echo "$JAVA_HOME/bin/java --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData -Xmx256m --sun-misc-unsafe-memory-access=allow -Djava.io.tmpdir=$1 -jar $JAR"
}

rxe_check_packages() {
    local f
    for f in "$KERNEL" /usr/bin/qemu-system-x86_64 /bin/busybox; do
        [ -e "$f" ] || { echo "missing $f: run $HERE/install-deps" >&2; exit 2; }
    done
}

# Builds $1/initramfs.gz: busybox plus the 9p/virtio modules; its init mounts the host root read-only
# over virtio-9p and switch_roots into the script named by scalep.guest= on the kernel command line.
rxe_initramfs() {
    local out="$1" m
    local dir="$out/initramfs"
    mkdir -p "$dir"/{bin,dev,proc,sys,mnt,lib/modules}
    cp /bin/busybox "$dir/bin/busybox"
    for m in netfs fscache 9pnet virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci 9pnet_virtio 9p; do
        cp "$(modinfo -k "$KVER" -n "$m")" "$dir/lib/modules/$m.ko"
    done
    cat > "$dir/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for m in netfs fscache 9pnet virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci 9pnet_virtio 9p; do
    insmod /lib/modules/$m.ko 2>/dev/null
done
guest=
for w in $(cat /proc/cmdline); do
    case "$w" in scalep.guest=*) guest="${w#scalep.guest=}" ;; esac
done
[ -n "$guest" ] || { echo "no scalep.guest= on the kernel command line"; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /mnt || { echo "9p root failed"; poweroff -f; }
mount --move /proc /mnt/proc; mount --move /sys /mnt/sys; mount --move /dev /mnt/dev
exec switch_root /mnt /bin/bash "$guest"
INIT
    chmod +x "$dir/init"
    (cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.gz"
}

# Prints a sweep's rates from its results.csv, one line per level and thread count, each prefixed with
# $1: the median over the repeats and their range, in thousands of messages per second (a TCG guest
# moves thousands, so they come from the messages and seconds columns). Fails when there are none.
rxe_sweep_rates() {
    python3 - "$1" "$2" <<'PY'
import csv, statistics, sys
label, path = sys.argv[1], sys.argv[2]
rates = {}
for r in csv.DictReader(open(path)):
    rates.setdefault((r["category"], int(r["threads"])), []).append(int(r["messages"]) / float(r["seconds"]) / 1000)
if not rates:
    sys.exit("no rates in " + path)
for (cat, t), v in rates.items():
    print(f"{label}{cat:<12} {t} thread{'s' if t > 1 else ' '} {statistics.median(v):7.2f} Kmsg/s"
          f" ({min(v):.2f}..{max(v):.2f} over {len(v)} repeats)")
PY
}
