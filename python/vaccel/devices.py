"""vaccel.devices - the devices a client reports, and which one a spec picks.

Owns: vaccel.Device (a device's vaccel_device_info, named) and device
selection. Decides, as vaccelctl's --device does
(tools/vaccelctl/src/device_spec.hpp):
  - a spec is "auto" (the default), an index (int, or "N" or "[N]" as
    `vaccelctl devices` prints it), "cpu", "cpu:N", "vulkan:N", "cuda:N"
    (N counts devices of that kind, from 0; a bare kind means :0; kinds in
    any case), a device's name (exact, else in any case, else the start of
    exactly one device's name in any case), or a Device;
  - a device's kind comes from its driver string;
  - "auto" is, among the devices that admit TOSA programs, a GPU before an
    NPU before anything else, then the lowest index;
  - a spec that matches nothing is refused (InvalidArgument) with the list
    of devices; an index past the end is refused as libvaccel refuses it
    (VACCEL_D_NO_DEVICE, arg0 = index, arg1 = count).
"""

from dataclasses import dataclass, field

from . import _vaccel
from .errors import refusal

__all__ = ["Device", "select_device"]

_FORMAT_NAMES = {
    _vaccel.FORMAT_TOSA: "tosa",
    _vaccel.FORMAT_CUDA_PTX: "cuda-ptx",
    _vaccel.FORMAT_CUDA_CUBIN: "cuda-cubin",
    _vaccel.FORMAT_CPU_BUILTIN: "cpu-builtin",
    _vaccel.FORMAT_SPIRV: "spirv",
}
_CLASS_NAMES = {_vaccel.CLASS_OTHER: "other", _vaccel.CLASS_GPU: "gpu", _vaccel.CLASS_NPU: "npu"}
_KINDS = ("cpu", "vulkan", "cuda")


@dataclass(frozen=True)
class Device:
    """One device of a client, as vaccel_device_info describes it."""

    index: int
    name: str
    driver: str
    kind: str            # "cpu", "vulkan", "cuda" or "other" (from the driver)
    device_class: str    # "gpu", "npu" or "other"
    vendor_id: int
    device_id: int
    uuid: str            # 32 hex digits
    pci: tuple           # (domain, bus, device, function) or None
    memory_bytes: int
    memory_caps: int     # vaccel.MEM_* bits
    formats: tuple       # names of the program formats it admits: "tosa", "spirv", ...
    tosa_targets: tuple  # (major, minor, profiles, level, extensions) per target
    limits: dict = field(hash=False, compare=False)
    lost: bool = False

    @property
    def host_visible(self):
        """Whether the device's buffers can live in host-visible memory."""
        return bool(self.memory_caps & (_vaccel.MEM_HOST_VISIBLE | _vaccel.MEM_SHARED))

    def __str__(self):
        return '[%d] %s "%s"' % (self.index, self.kind, self.name)


def _kind_of(record):
    driver = record["driver"].lower()
    for kind in ("vulkan", "cuda", "cpu"):
        if kind in driver:
            return kind
    if record["device_class"] == _vaccel.CLASS_OTHER and "cpu" in record["name"].lower():
        return "cpu"
    return "other"


def device_of(record):
    """A Device from the extension's dict of a vaccel_device_info."""
    formats = tuple(name for code, name in sorted(_FORMAT_NAMES.items())
                    if record["formats"] & (1 << code))
    return Device(
        index=record["index"], name=record["name"], driver=record["driver"],
        kind=_kind_of(record),
        device_class=_CLASS_NAMES.get(record["device_class"], "other"),
        vendor_id=record["vendor_id"], device_id=record["device_id"],
        uuid=record["uuid"].hex(), pci=record["pci"],
        memory_bytes=record["memory_bytes"], memory_caps=record["memory_caps"],
        formats=formats, tosa_targets=tuple(record["tosa_targets"]),
        limits=dict(record["limits"]), lost=record["state"] == _vaccel.DEVICE_LOST)


def _listing(devices):
    if not devices:
        return "there are no devices"
    return "the devices are: " + ", ".join(str(d) for d in devices)


def _class_rank(device):
    return {"gpu": 0, "npu": 1}.get(device.device_class, 2)


def select_device(devices, spec):
    """The Device of `devices` that `spec` names (see the module comment)."""
    if isinstance(spec, Device):
        spec = spec.index
    if isinstance(spec, str):
        bare = spec[1:-1] if len(spec) >= 2 and spec[0] == "[" and spec[-1] == "]" else spec
        if bare.isdigit():
            spec = int(bare)
    if isinstance(spec, int) and not isinstance(spec, bool):
        if 0 <= spec < len(devices):
            return devices[spec]
        raise refusal(_vaccel.E_INVALID_ARGUMENT,
                      "device=%d names no device; %s" % (spec, _listing(devices)),
                      _vaccel.D_NO_DEVICE, spec, len(devices))
    if not isinstance(spec, str) or not spec:
        raise refusal(_vaccel.E_INVALID_ARGUMENT,
                      "device=%r is not a device: give 'auto', 'cpu', 'vulkan:N', 'cuda:N', "
                      "a device name, an index or a vaccel.Device" % (spec,))
    if spec.lower() == "auto":
        admitting = [d for d in devices if "tosa" in d.formats]
        if not admitting:
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "no device admits TOSA programs; %s" % _listing(devices))
        return min(admitting, key=lambda d: (_class_rank(d), d.index))
    kind, colon, number = spec.partition(":")
    kind = kind.lower()
    if kind in _KINDS:
        if colon and not number.isdigit():
            raise refusal(_vaccel.E_INVALID_ARGUMENT,
                          "device=%r: '%s' is not a device number; write %s:N with N = 0 "
                          "for the first %s device" % (spec, number, kind, kind))
        ordinal = int(number) if colon else 0
        of_kind = [d for d in devices if d.kind == kind]
        if ordinal < len(of_kind):
            return of_kind[ordinal]
        raise refusal(_vaccel.E_INVALID_ARGUMENT,
                      "no device matches device=%r: there %s %d %s device%s; %s"
                      % (spec, "is" if len(of_kind) == 1 else "are", len(of_kind), kind,
                         "" if len(of_kind) == 1 else "s", _listing(devices)))
    for device in devices:
        if device.name == spec:
            return device
    for device in devices:
        if device.name.lower() == spec.lower():
            return device
    starting = [d for d in devices if d.name.lower().startswith(spec.lower())]
    if len(starting) == 1:
        return starting[0]
    if starting:
        raise refusal(_vaccel.E_INVALID_ARGUMENT,
                      "device=%r starts the name of %d devices: %s; give its index or more of "
                      "its name" % (spec, len(starting),
                                    ", ".join('[%d] "%s"' % (d.index, d.name) for d in starting)))
    raise refusal(_vaccel.E_INVALID_ARGUMENT,
                  "no device matches device=%r (not auto, an index, cpu, vulkan:N, cuda:N, nor "
                  "the start of a device's name); %s" % (spec, _listing(devices)))
