#!/usr/bin/env bash
# mmdebstrap customize hook: $1 is the guest root. Runs on the build host.
set -euo pipefail
rootfs=$1
pubkey=$2
recipe=$(dirname "${BASH_SOURCE[0]}")

echo "/dev/vda1 / ext4 errors=remount-ro 0 1" >"$rootfs/etc/fstab"
echo "inferops-lab" >"$rootfs/etc/hostname"
install -d -m 0755 "$rootfs/boot/grub"
install -m 0644 "$recipe/grub.cfg" "$rootfs/boot/grub/grub.cfg"

install -d -m 0700 "$rootfs/root/.ssh"
install -m 0600 "$pubkey" "$rootfs/root/.ssh/authorized_keys"

install -m 0644 "$recipe/guest/10-lab-user.network" "$rootfs/etc/systemd/network/"
install -m 0755 "$recipe/guest/inferops-lab-guest" "$rootfs/usr/local/sbin/"
install -m 0644 "$recipe/guest/inferops-lab-guest.service" "$rootfs/etc/systemd/system/"
install -m 0644 "$recipe/guest/qemu_fw_cfg.conf" "$rootfs/etc/modules-load.d/"
# Ansible's modules compiled once per guest, not once per task (the file says why).
install -m 0644 "$recipe/guest/inferops_lab_pycache.py" "$recipe/guest/inferops_lab_pycache.pth" \
  "$rootfs/usr/lib/python3/dist-packages/"
# Guest-side initramfs rebuilds (mdadm.conf changes) take ~70 s with dep, ~10 min with most.
echo "MODULES=dep" >"$rootfs/etc/initramfs-tools/conf.d/inferops-lab.conf"

chroot "$rootfs" systemctl enable systemd-networkd ssh inferops-lab-guest.service
chroot "$rootfs" systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer
# Fresh host keys per image; guests are disposable.
chroot "$rootfs" ssh-keygen -A
# nvme-cli's postinst generated a host NQN/ID at build time; every guest
# would share it. Real hosts get theirs from the nvmeof_initiator role.
rm -f "$rootfs/etc/nvme/hostnqn" "$rootfs/etc/nvme/hostid"
