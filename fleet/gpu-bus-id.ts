// PCI bus ids as the kernel and nvidia-smi write them, mapped to one key (docs/gpu-health.md): the
// kernel's `PCI:0000:3b:00` (domain:bus:device) and nvidia-smi's `00000000:3B:00.0`
// (domain:bus:device.function) name the same GPU when domain, bus and device agree, in any case.

const BUS_ID = /^(?:PCI:)?([0-9a-f]{1,8}):([0-9a-f]{1,2}):([0-9a-f]{1,2})(?:\.([0-7]))?$/i;

/** `domain:bus:device` as numbers (`0:59:0`), or null when `text` is no PCI bus id. */
export function busKey(text: string): string | null {
  const m = BUS_ID.exec(text.trim());
  if (!m) return null;
  return [m[1], m[2], m[3]].map((h) => parseInt(h!, 16)).join(':');
}

/** Whether two bus ids, in either form, name the same device. */
export function sameBus(a: string, b: string): boolean {
  const ka = busKey(a);
  return ka !== null && ka === busKey(b);
}
