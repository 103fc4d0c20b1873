"""inferops lab: disposable QEMU guests shaped like the serving nodes the collection targets."""
