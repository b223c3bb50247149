// payload_files.hpp - which descriptors a socket client may pass as a
// payload file, and how the daemon lets go of the others.
//
// Decides:
//  - a payload file must be a memfd: a file of the kernel's shared memory
//    filesystem (memfd_create(2) without MFD_HUGETLB; a tmpfs file passes
//    too, being the same kind of file). The test is F_GET_SEALS succeeding
//    (the kernel answers it only for shared memory and hugetlbfs files, from
//    the file itself, without asking any filesystem) and then fstatfs()
//    naming tmpfs (hugetlbfs refused: a fault on a hugetlb page the pool
//    cannot supply is a SIGBUS). These are the only files whose reads,
//    writes and close complete from memory: a file on a FUSE mount or a
//    network filesystem can make any of them wait for another process
//    forever, and a pipe or socket has no size and blocks its reader.
//  - anything else is refused per request (InvalidArgument,
//    VACCEL_D_BAD_VALUE, arg0 = offsetof(vaccel_msg_header, flags), arg1 =
//    the file's type bits or filesystem magic), with a note saying "pass a
//    memfd"; the session goes on.
//  - a refused descriptor is never read, stat'ed or closed on the caller's
//    thread: close() runs the filesystem's flush (FUSE sends FLUSH and waits
//    for the answer without a timeout). It is closed on a thread of its own
//    (release_descriptors): a close that never returns holds that thread
//    and the descriptors queued behind it, never the reactor or a device
//    worker.
#pragma once

#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/daemon/unique_fd.hpp"

namespace vaccel::daemon {

// Whether `fd` may be used as a payload file (see above); the refusal if not.
// Only F_GET_SEALS and (for shared memory files) fstatfs() touch the file.
Status check_payload_file(int fd);

// Closes `fd`: here when it is a shared memory file (a close that cannot
// block), on the descriptor closer thread otherwise.
void release_descriptor(UniqueFd fd);
void release_descriptors(std::vector<UniqueFd>& fds);

}  // namespace vaccel::daemon
