// SPDX-License-Identifier: GPL-2.0
/*
 * vaccel_request.c - one forwarded message: its memory, its payload and its
 * references.
 *
 * Owns the allocation of a request, the pinning (or copying) of the
 * client's payload at ioctl time, the single copy of payload bytes between
 * the client's pinned pages and the daemon's memory (pread/pwrite on the
 * server node), and the release of all of it with the last reference.
 * Decides the errno of each contract error. The state machine itself is in
 * vaccel_server.c.
 */
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
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
 * Process context (client or daemon task), may sleep. The new request holds
 * one reference (the caller's) and a reference on `server`; its message is
 * the header plus a copy of `args` (zeroes when `args` is NULL).
 */
struct vaccel_request *vaccel_request_alloc(struct vaccel_server *server,
					    u16 opcode, u64 session,
					    const void *args, u32 args_bytes)
{
	struct vaccel_request *req;

	if (WARN_ON_ONCE(args_bytes > sizeof(req->message.args)))
		return NULL;
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return NULL;
	atomic_inc(&vaccel_requests_alive);
	kref_init(&req->ref);
	INIT_LIST_HEAD(&req->node);
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

	if (payload->pages) {
		unpin_user_pages_dirty_lock(payload->pages, payload->page_count,
					    payload->writable);
		kvfree(payload->pages);
	}
	kfree(payload->copy);
	if (req->notify)
		fput(req->notify);
	if (req->map)
		fput(req->map);
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
 * Client task. Pins the client's `bytes` at `uaddr` for the life of the
 * request (FOLL_WRITE when the daemon will write them). The caller bounded
 * `bytes` by VACCEL_SRV_PAYLOAD_MAX.
 */
int vaccel_request_pin(struct vaccel_request *req, u64 uaddr, u64 bytes,
		       bool writable)
{
	struct vaccel_payload *payload = &req->payload;
	unsigned long start = uaddr & PAGE_MASK;
	unsigned long pinned = 0;
	unsigned long count;
	int ret;

	payload->bytes = bytes;
	payload->writable = writable;
	if (bytes == 0)
		return 0;
	if (uaddr + bytes < uaddr ||
	    !access_ok(u64_to_user_ptr(uaddr), bytes))
		return -EFAULT;
	count = (offset_in_page(uaddr) + bytes + PAGE_SIZE - 1) >> PAGE_SHIFT;
	payload->pages = kvmalloc_array(count, sizeof(struct page *),
					GFP_KERNEL);
	if (!payload->pages)
		return -ENOMEM;
	payload->first_offset = offset_in_page(uaddr);
	while (pinned < count) {
		ret = pin_user_pages_fast(start + (pinned << PAGE_SHIFT),
					  count - pinned,
					  writable ? FOLL_WRITE : 0,
					  payload->pages + pinned);
		if (ret <= 0)
			break;
		pinned += ret;
	}
	payload->page_count = pinned;
	if (pinned < count)
		return -EFAULT;	/* the release unpins what was pinned */
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
	payload->copy = kmalloc(bytes, GFP_KERNEL);
	if (!payload->copy)
		return -ENOMEM;
	if (copy_from_user(payload->copy, u64_to_user_ptr(uaddr), bytes))
		return -EFAULT;
	return 0;
}

/*
 * Daemon task (pread/pwrite), may sleep. Moves up to `count` bytes at
 * payload `offset` between the pinned pages and the daemon's `ubuf`.
 * Returns the bytes moved, or -EFAULT when nothing could be.
 */
static ssize_t vaccel_payload_pages_copy(struct vaccel_payload *payload,
					 char __user *ubuf, size_t count,
					 u64 offset, bool to_daemon)
{
	size_t done = 0;

	while (done < count) {
		u64 at = payload->first_offset + offset + done;
		struct page *page = payload->pages[at >> PAGE_SHIFT];
		size_t in_page = offset_in_page(at);
		size_t chunk = min_t(size_t, count - done, PAGE_SIZE - in_page);
		unsigned long left;
		char *kaddr;

		kaddr = kmap_local_page(page);
		if (to_daemon)
			left = copy_to_user(ubuf + done, kaddr + in_page, chunk);
		else
			left = copy_from_user(kaddr + in_page, ubuf + done,
					      chunk);
		kunmap_local(kaddr);
		done += chunk - left;
		if (left)
			break;
	}
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
	return vaccel_payload_pages_copy(payload, dst, count, offset, true);
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
	return vaccel_payload_pages_copy(payload, (char __user *)src, count,
					 offset, false);
}
