#!/bin/sh
# Process 1 of the sandbox VM (kernel option init=/opt/deskscore/vm-init.sh): the file systems
# a session needs, the network user-mode QEMU gives (10.0.2.15, gateway 10.0.2.2), then the
# same desktop session as the container's entrypoint, as the desktop's user. No service
# manager: the VM lives for one episode and is thrown away with its overlay.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mountpoint -q /dev/pts || mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mountpoint -q /dev/shm || mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mount -o remount,rw / 2>/dev/null
hostname deskscore-vm

modprobe virtio_net 2>/dev/null
modprobe virtio_rng 2>/dev/null
ip link set lo up
iface=""
for _ in $(seq 50); do
    for path in /sys/class/net/*; do
        name="${path##*/}"
        [ "$name" = lo ] || { iface="$name"; break; }
    done
    [ -n "$iface" ] && break
    sleep 0.1
done
ip addr add 10.0.2.15/24 dev "$iface"
ip link set "$iface" up
ip route add default via 10.0.2.2
echo "nameserver 10.0.2.3" >/etc/resolv.conf

# The clock: a VM resumed from a saved state wakes at the time the state was saved; QEMU's RTC
# runs on the host's clock, so the system clock follows it whenever they part by over 2 s.
sync_clock() {
    while :; do
        if read -r rtc </sys/class/rtc/rtc0/since_epoch 2>/dev/null; then
            drift=$((rtc - $(date +%s)))
            if [ "$drift" -gt 2 ] || [ "$drift" -lt -2 ]; then date -s "@$rtc" >/dev/null; fi
        fi
        sleep 1
    done
}
sync_clock </dev/null >/dev/null 2>&1 &

# The controller listens on the guest's loopback only, as in the container; vm-relay.py takes
# the connections QEMU forwards from the host's 127.0.0.1:PORT to the guest's address there.
# Then the container's image settings (build.py's import_image) and the same session.
cd /home/user || exit 1
setpriv --reuid=1000 --regid=1000 --init-groups \
    python3 /opt/deskscore/vm-relay.py 10.0.2.15 5000 127.0.0.1 5000 </dev/null &
exec setpriv --reuid=1000 --regid=1000 --init-groups env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 HOME=/home/user USER=user LOGNAME=user DISPLAY=:0 \
    DESKSCORE_OPENER=l3afpad \
    python3 /opt/deskscore/desktop.py --display :0 --host 127.0.0.1 --port 5000 --quiet
