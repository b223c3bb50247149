"""vaccel.errors - the exceptions every refusal and failure raises.

Owns: vaccel.Error and one subclass per contract error (uapi/vaccel.h,
enum vaccel_error), named as libvaccel names them (vaccel_error_name):
InvalidArgument, ResourceLimit, Busy, DeviceLost, ... Decides:
  - every error carries the contract status (code, detail, limit, arg0,
    arg1), the errno the call returned, libvaccel's sentence for it
    (`sentence`), and what the package was doing (`context`);
    str(error) is "<context>: <sentence>";
  - refusals the package makes itself (a wrong input dtype, an unknown
    tensor name, a closed client) carry a contract status as well, and
    libvaccel's sentence for that status, so every error reads the same;
  - a few subclasses are also the matching built-in exception
    (InvalidArgument is a ValueError, OutOfMemory a MemoryError,
    PermissionDenied a PermissionError, DeadlineExpired a TimeoutError);
    DaemonGone (DeviceLost with VACCEL_D_PEER_GONE: no daemon at the socket
    or node, or it went away) is a DeviceLost and a ConnectionError;
  - the package's own refusals read as their one sentence: str(error) is
    the context alone, which already says what was refused and why (the
    status's generic sentence stays in `sentence`).
"""

from . import _vaccel

__all__ = [
    "Error", "Unsupported", "Incompatible", "InvalidArgument", "OutOfBounds",
    "OutOfMemory", "ResourceLimit", "DeviceLost", "Busy", "PermissionDenied",
    "DeadlineExpired", "External", "Cancelled", "DaemonGone", "refusal",
]


def _names_with_prefix(prefix):
    return {
        getattr(_vaccel, name): "VACCEL_" + name
        for name in dir(_vaccel)
        if name.startswith(prefix)
    }


_DETAIL_NAMES = _names_with_prefix("D_")
_LIMIT_NAMES = _names_with_prefix("LIMIT_")


class Error(Exception):
    """A vaccel call was refused, or accepted work failed.

    Attributes: code (enum vaccel_error, e.g. vaccel.E_BUSY), name
    ("Busy"), detail (enum vaccel_detail, e.g. vaccel.D_IN_USE),
    detail_name ("VACCEL_D_IN_USE"), limit (enum vaccel_limit_kind, for
    VACCEL_D_LIMIT), arg0 and arg1 (the values the detail names), errno
    (positive), sentence (libvaccel's sentence), context (what was being
    done).
    """

    def __init__(self, rc, code, detail, limit, arg0, arg1, context, sentence, own=False):
        # First: OSError's __init__ (PermissionError, TimeoutError) resets errno.
        if own:
            text = context
        else:
            text = "%s: %s" % (context, sentence) if context else sentence
        super().__init__(text)
        self.own = own  # a refusal of the package's own (see the module comment)
        self.errno = -rc if rc < 0 else rc
        self.code = code
        self.name = _vaccel.error_name(code)
        self.detail = detail
        self.detail_name = _DETAIL_NAMES.get(detail, "VACCEL_D_%d" % detail)
        self.limit = limit
        self.limit_name = _LIMIT_NAMES.get(limit, "VACCEL_LIMIT_%d" % limit)
        self.arg0 = arg0
        self.arg1 = arg1
        self.context = context
        self.sentence = sentence

    def __str__(self):
        return self.args[0]

    def __reduce__(self):
        return (_from_failure, (-self.errno, self.code, self.detail, self.limit,
                                self.arg0, self.arg1, self.context, self.sentence, self.own))


class Unsupported(Error):
    """VACCEL_E_UNSUPPORTED (-EOPNOTSUPP): not offered at all."""


class Incompatible(Error):
    """VACCEL_E_INCOMPATIBLE (-ENOEXEC): offered, not for this."""


class InvalidArgument(Error, ValueError):
    """VACCEL_E_INVALID_ARGUMENT (-EINVAL)."""


class OutOfBounds(Error):
    """VACCEL_E_OUT_OF_BOUNDS (-ERANGE)."""


class OutOfMemory(Error, MemoryError):
    """VACCEL_E_OUT_OF_MEMORY (-ENOMEM)."""


class ResourceLimit(Error):
    """VACCEL_E_RESOURCE_LIMIT (-EDQUOT): `limit` names the limit, arg0 its value."""


class DeviceLost(Error):
    """VACCEL_E_DEVICE_LOST (-ENODEV), also: no daemon serves the socket."""


class DaemonGone(DeviceLost, ConnectionError):
    """DeviceLost with VACCEL_D_PEER_GONE: no daemon serves the socket or the
    node (or the one that did went away): a ConnectionError too."""


class Busy(Error):
    """VACCEL_E_BUSY (-EBUSY): still in use; release the users first."""


class PermissionDenied(Error, PermissionError):
    """VACCEL_E_PERMISSION_DENIED (-EACCES)."""


class DeadlineExpired(Error, TimeoutError):
    """VACCEL_E_DEADLINE_EXPIRED (-ETIME)."""


class External(Error):
    """VACCEL_E_EXTERNAL (-EIO): a lower layer's error (arg0 domain, arg1 code)."""


class Cancelled(Error):
    """VACCEL_E_CANCELLED (-ECANCELED): the work never ran."""


_CLASS_OF_CODE = {
    _vaccel.E_UNSUPPORTED: Unsupported,
    _vaccel.E_INCOMPATIBLE: Incompatible,
    _vaccel.E_INVALID_ARGUMENT: InvalidArgument,
    _vaccel.E_OUT_OF_BOUNDS: OutOfBounds,
    _vaccel.E_OUT_OF_MEMORY: OutOfMemory,
    _vaccel.E_RESOURCE_LIMIT: ResourceLimit,
    _vaccel.E_DEVICE_LOST: DeviceLost,
    _vaccel.E_BUSY: Busy,
    _vaccel.E_PERMISSION_DENIED: PermissionDenied,
    _vaccel.E_DEADLINE_EXPIRED: DeadlineExpired,
    _vaccel.E_EXTERNAL: External,
    _vaccel.E_CANCELLED: Cancelled,
}


def _from_failure(rc, code, detail, limit, arg0, arg1, context, sentence, own=False):
    """The exception for a failure; the extension calls it (call_failure.cpp)."""
    cls = _CLASS_OF_CODE.get(code, Error)
    if code == _vaccel.E_DEVICE_LOST and detail == _vaccel.D_PEER_GONE:
        cls = DaemonGone
    return cls(rc, code, detail, limit, arg0, arg1, context, sentence, own)


def refusal(code, context, detail=_vaccel.D_NONE, arg0=0, arg1=0):
    """The exception for a refusal the package makes itself, with
    libvaccel's sentence for its status."""
    sentence = _vaccel.status_message(code, detail, 0, arg0, arg1)
    return _from_failure(_vaccel.errno_of(code), code, detail, 0, arg0, arg1, context,
                         sentence, own=True)
