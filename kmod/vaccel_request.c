// SPDX-License-Identifier: GPL-2.0
/*
 * One forwarded message: its memory, its payload and its
 * references.
 *
 * Owns the allocation of a request (charged to the memory cgroup of the
 * task that caused it), the recording (or copying) of the client's payload
 * at ioctl time, the single copy of payload bytes between the client's
 * memory and the daemon's (pread/pwrite on the server node: the client's
 * pages are pinned for the span of one chunk's copy only, so a request that
 * waits pins nothing), and the release of all of it with the last
 * reference.
 * Decides the errno of each contract error, and which memory may hold a
 * recorded payload: anonymous, shmem (memfd, tmpfs, MAP_SHARED |
 * MAP_ANONYMOUS, a BUFFER_MAP token's mapping) or hugetlb memory only -
 * memory whose pages never wait on a filesystem. A payload on a mapping of
 * any other file (ext4, NFS, FUSE, ramfs, ...) is refused with
 * -EOPNOTSUPP before any of its pages is touched: faulting such a page in
 * under the daemon's copy could wait on a filesystem for ever (a FUSE
 * server that never answers), and the daemon's worker with it. The state
 * machine itself is in vaccel_server.c.
 */
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/hugetlb.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vaccel_drv.h"

/* Requests allocated and not yet freed; zero whenever no file is open. */
static atomic_t vaccel_requests_alive = ATOMIC_INIT(0);

/* Any context. */
int vaccel_requests_alive_count(void)
{
	return atomic_read(&vaccel_requests_alive);
}

/* Index = enum vaccel_error. */
static const int vaccel_errno_of[VACCEL_E_COUNT] = {
	[VACCEL_OK] = 0,
	[VACCEL_E_UNSUPPORTED] = -EOPNOTSUPP,
	[VACCEL_E_INCOMPATIBLE] = -ENOEXEC,
	[VACCEL_E_INVALID_ARGUMENT] = -EINVAL,
	[VACCEL_E_OUT_OF_BOUNDS] = -ERANGE,
	[VACCEL_E_OUT_OF_MEMORY] = -ENOMEM,
	[VACCEL_E_RESOURCE_LIMIT] = -EDQUOT,
	[VACCEL_E_DEVICE_LOST] = -ENODEV,
	[VACCEL_E_BUSY] = -EBUSY,
	[VACCEL_E_PERMISSION_DENIED] = -EACCES,
	[VACCEL_E_DEADLINE_EXPIRED] = -ETIME,
	[VACCEL_E_EXTERNAL] = -EIO,
	[VACCEL_E_CANCELLED] = -ECANCELED,
};

/* Any context. An error outside the enum is the daemon's fault: -EIO. */
int vaccel_error_to_errno(u32 error)
{
	if (error >= VACCEL_E_COUNT)
		return -EIO;
	return vaccel_errno_of[error];
}

/* Any context. */
void vaccel_status_set(struct vaccel_status *status, u32 error, u32 detail,
		       u64 arg0, u64 arg1)
{
	memset(status, 0, sizeof(*status));
	status->error = error;
	status->detail = detail;
	status->arg0 = arg0;
	status->arg1 = arg1;
}

/*
 * Process context (client task), may sleep. The new request holds one
 * reference (the caller's) and a reference on `server`; its message is the
 * header plus a copy of `args` (zeroes when `args` is NULL). Its memory is
 * charged to the caller's memory cgroup.
 */
struct vaccel_request *vaccel_request_alloc(struct vaccel_server *server,
					    u16 opcode, u64 session,
					    const void *args, u32 args_bytes)
{
	struct vaccel_request *req;

	if (WARN_ON_ONCE(args_bytes > sizeof(req->message.args)))
		return NULL;
	req = kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT);
	if (!req)
		return NULL;
	atomic_inc(&vaccel_requests_alive);
	kref_init(&req->ref);
	INIT_LIST_HEAD(&req->node);
	INIT_HLIST_NODE(&req->deferred_node);
	init_completion(&req->done);
	req->state = VACCEL_REQ_QUEUED;
	req->server = server;
	kref_get(&server->ref);
	req->message.header.magic = VACCEL_MSG_MAGIC;
	req->message.header.opcode = opcode;
	req->message.header.args_bytes = args_bytes;
	req->message.header.session = session;
	if (args)
		memcpy(&req->message.args, args, args_bytes);
	req->message_bytes = sizeof(req->message.header) + args_bytes;
	return req;
}

/* Any context. */
void vaccel_request_get(struct vaccel_request *req)
{
	kref_get(&req->ref);
}

/*
 * Process context, may sleep (unpinning dirties pages under the page lock):
 * never called with queue_lock held.
 */
static void vaccel_request_release(struct kref *ref)
{
	struct vaccel_request *req = container_of(ref, struct vaccel_request,
						  ref);
	struct vaccel_payload *payload = &req->payload;

	kfree(payload->copy);
	if (payload->mm)
		mmdrop(payload->mm);
	if (req->notify)
		fput(req->notify);
	if (req->map)
		fput(req->map);
	if (req->session) {
		atomic_dec(&req->session->requests);
		vaccel_session_put(req->session);
	}
	vaccel_server_put(req->server);
	kfree(req);
	atomic_dec(&vaccel_requests_alive);
}

/* Process context, may sleep; never with queue_lock held. */
void vaccel_request_put(struct vaccel_request *req)
{
	kref_put(&req->ref, vaccel_request_release);
}

/*
 * mmap_lock of `mm` held (for reading at least). Whether every VMA that
 * [start, end) covers may hold a payload the daemon reads (or, `writable`,
 * writes): 0; -EFAULT for a hole, a missing permission or VM_IO/VM_PFNMAP
 * memory; -EOPNOTSUPP for a mapping of a file outside shmem and hugetlbfs.
 * Looks at the VMAs only; no page is touched.
 */
static int vaccel_range_check_locked(struct mm_struct *mm, unsigned long start,
				     unsigned long end, bool writable)
{
	vm_flags_t need = writable ? VM_WRITE : VM_READ;
	struct vm_area_struct *vma;

	while (start < end) {
		vma = find_vma(mm, start);
		if (!vma || vma->vm_start > start ||
		    (vma->vm_flags & need) != need ||
		    (vma->vm_flags & (VM_IO | VM_PFNMAP)))
			return -EFAULT;
		if (!vma_is_anonymous(vma) && !shmem_file(vma->vm_file) &&
		    !is_vm_hugetlb_page(vma))
			return -EOPNOTSUPP;
		start = vma->vm_end;
	}
	return 0;
}

/* Client task. vaccel_range_check_locked() on the caller's mm. */
static int vaccel_range_check(unsigned long start, unsigned long end,
			      bool writable)
{
	struct mm_struct *mm = current->mm;
	int ret;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = vaccel_range_check_locked(mm, start, end, writable);
	mmap_read_unlock(mm);
	return ret;
}

/*
 * Client task. Records the client's `bytes` at `uaddr` as the payload
 * (the daemon writes them when `writable`), after checking they are
 * mapped by memory a payload may live in (vaccel_range_check_locked:
 * -EFAULT, -EOPNOTSUPP); nothing is pinned until a copy
 * (vaccel_payload_user_copy), which checks again. The caller bounded
 * `bytes` by VACCEL_SRV_PAYLOAD_MAX.
 */
int vaccel_request_user_payload(struct vaccel_request *req, u64 uaddr,
				u64 bytes, bool writable)
{
	struct vaccel_payload *payload = &req->payload;
	int ret;

	payload->bytes = bytes;
	payload->writable = writable;
	if (bytes == 0)
		return 0;
	if (uaddr + bytes < uaddr ||
	    !access_ok(u64_to_user_ptr(uaddr), bytes))
		return -EFAULT;
	ret = vaccel_range_check(uaddr, uaddr + bytes, writable);
	if (ret)
		return ret;
	payload->uaddr = uaddr;
	mmgrab(current->mm);
	payload->mm = current->mm;
	return 0;
}

/*
 * Client task. Copies a small payload (bindings, wait handles) into the
 * request; `bytes` was bounded by the caller to VACCEL_COPIED_PAYLOAD_MAX.
 */
int vaccel_request_copy_payload(struct vaccel_request *req, u64 uaddr,
				u64 bytes)
{
	struct vaccel_payload *payload = &req->payload;

	if (WARN_ON_ONCE(bytes > VACCEL_COPIED_PAYLOAD_MAX))
		return -EINVAL;
	payload->bytes = bytes;
	if (bytes == 0)
		return 0;
	payload->copy = kmalloc(bytes, GFP_KERNEL_ACCOUNT);
	if (!payload->copy)
		return -ENOMEM;
	if (copy_from_user(payload->copy, u64_to_user_ptr(uaddr), bytes))
		return -EFAULT;
	return 0;
}

/* Client pages one copy pins at most; a copy moves at most this much. */
#define VACCEL_PIN_PAGES	32

/*
 * Daemon task (pread/pwrite), may sleep. Moves up to `count` bytes at
 * payload `offset` between the client's memory and the daemon's `ubuf`,
 * pinning the client's pages (at most VACCEL_PIN_PAGES) for this copy
 * only. Returns the bytes moved, or -EFAULT when nothing could be (the
 * client's address space is gone, or it unmapped the range meanwhile), or
 * -EOPNOTSUPP when the client mapped a file there since its ioctl.
 *
 * Invariant: the range's VMAs are checked and its pages pinned under one
 * hold of the client's mmap_lock. A client that remaps the range after
 * its ioctl's check (munmap, then mmap() of a FUSE file at the same
 * address) needs that lock for writing, so it either finished before the
 * check here, which then sees the file, or waits until the pages are
 * pinned. The pin cannot drop the lock in between: it is given no
 * `locked` argument, so GUP neither releases mmap_lock nor retries a
 * fault (no FAULT_FLAG_ALLOW_RETRY), and every page it faults in belongs
 * to a VMA just checked.
 */
static ssize_t vaccel_payload_user_copy(struct vaccel_payload *payload,
					char __user *ubuf, size_t count,
					u64 offset, bool to_daemon)
{
	struct page *pages[VACCEL_PIN_PAGES];
	u64 addr = payload->uaddr + offset;
	size_t in_page = offset_in_page(addr);
	size_t done = 0;
	long pinned, i;

	count = min_t(size_t, count, VACCEL_PIN_PAGES * PAGE_SIZE - in_page);
	if (!mmget_not_zero(payload->mm))
		return -EFAULT;
	mmap_read_lock(payload->mm);
	pinned = vaccel_range_check_locked(payload->mm, addr & PAGE_MASK,
					   PAGE_ALIGN(addr + count),
					   !to_daemon);
	if (!pinned)
		pinned = vaccel_pin_remote(payload->mm, addr & PAGE_MASK,
					   DIV_ROUND_UP(in_page + count,
							PAGE_SIZE),
					   to_daemon ? 0 : FOLL_WRITE, pages);
	mmap_read_unlock(payload->mm);
	mmput(payload->mm);
	if (pinned < 0)
		return pinned == -EOPNOTSUPP ? -EOPNOTSUPP : -EFAULT;
	if (pinned == 0)
		return -EFAULT;

	for (i = 0; i < pinned && done < count; i++) {
		size_t chunk = min_t(size_t, count - done, PAGE_SIZE - in_page);
		unsigned long left;
		char *kaddr;

		kaddr = kmap_local_page(pages[i]);
		if (to_daemon)
			left = copy_to_user(ubuf + done, kaddr + in_page, chunk);
		else
			left = copy_from_user(kaddr + in_page, ubuf + done,
					      chunk);
		kunmap_local(kaddr);
		done += chunk - left;
		in_page = 0;
		if (left)
			break;
	}
	unpin_user_pages_dirty_lock(pages, pinned, !to_daemon);
	if (done == 0 && count != 0)
		return -EFAULT;
	return done;
}

/*
 * Daemon task (pread). The caller holds a reference on `req`. Returns the
 * bytes copied, 0 at or past the end of the payload.
 */
ssize_t vaccel_payload_to_daemon(struct vaccel_request *req, char __user *dst,
				 size_t count, u64 offset)
{
	struct vaccel_payload *payload = &req->payload;

	if (payload->writable || offset >= payload->bytes)
		return 0;
	count = min_t(u64, count, payload->bytes - offset);
	if (payload->copy) {
		if (copy_to_user(dst, (char *)payload->copy + offset, count))
			return -EFAULT;
		return count;
	}
	return vaccel_payload_user_copy(payload, dst, count, offset, true);
}

/*
 * Daemon task (pwrite). Only a writable payload (BUFFER_READ) accepts
 * bytes; the caller holds a reference on `req`.
 */
ssize_t vaccel_payload_from_daemon(struct vaccel_request *req,
				   const char __user *src, size_t count,
				   u64 offset)
{
	struct vaccel_payload *payload = &req->payload;

	if (!payload->writable)
		return -EINVAL;
	if (offset >= payload->bytes)
		return -ENOSPC;
	count = min_t(u64, count, payload->bytes - offset);
	return vaccel_payload_user_copy(payload, (char __user *)src, count,
					offset, false);
}
