/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels vaccel.ko builds on.
 *
 * The module is written for Linux 6.1 (Debian 12) and 6.12 (Debian 13, and
 * Debian 12's newer kernel). Each difference is one wrapper here, decided
 * by the version in which the kernel's interface changed, so every other
 * file reads the same on both:
 *  - uring_cmd's header: <linux/io_uring.h> until 6.6, <linux/io_uring/cmd.h>
 *    from 6.7;
 *  - io_uring_cmd_done() and the task work callback take `issue_flags`
 *    from 6.1.23 ("block/io_uring: pass in issue_flags for uring_cmd task_work
 *    handling") on;
 *  - the SQE's command bytes: cmd->cmd until 6.6, io_uring_sqe_cmd(cmd->sqe)
 *    from 6.7;
 *  - cancelable commands (io_uring_cmd_mark_cancelable, IO_URING_F_CANCEL):
 *    from 6.7; before, a parked command cannot be taken back by io_uring;
 *  - pin_user_pages_remote() lost its `vmas` argument in 6.5;
 *  - vma->vm_flags is written through vm_flags_set() from 6.3.
 */
#ifndef VACCEL_COMPAT_H
#define VACCEL_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

/* The kernel built against, as KERNEL_VERSION() numbers it. */
#define VACCEL_KERNEL KERNEL_VERSION(LINUX_VERSION_MAJOR, \
				     LINUX_VERSION_PATCHLEVEL, \
				     LINUX_VERSION_SUBLEVEL)

#if KERNEL_VERSION(6, 7, 0) <= VACCEL_KERNEL
#include <linux/io_uring/cmd.h>
#define VACCEL_CMD_CANCELABLE 1
#else
#include <linux/io_uring.h>
#include <linux/io_uring_types.h>
#define VACCEL_CMD_CANCELABLE 0
#endif

#if KERNEL_VERSION(6, 1, 23) <= VACCEL_KERNEL
#define VACCEL_CMD_HAS_ISSUE_FLAGS 1
#else
#define VACCEL_CMD_HAS_ISSUE_FLAGS 0
#endif

#if KERNEL_VERSION(6, 1, 0) > VACCEL_KERNEL
#error "vaccel.ko needs Linux 6.1 or later (uring_cmd with task work)"
#endif

/* The 16 command bytes of the SQE that issued `cmd`. */
static inline const void *vaccel_cmd_bytes(struct io_uring_cmd *cmd)
{
#if KERNEL_VERSION(6, 7, 0) <= VACCEL_KERNEL
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

/* Any context. Completes `cmd` with `ret`. */
static inline void vaccel_cmd_done(struct io_uring_cmd *cmd, ssize_t ret,
				   unsigned int issue_flags)
{
#if VACCEL_CMD_HAS_ISSUE_FLAGS
	io_uring_cmd_done(cmd, ret, 0, issue_flags);
#else
	io_uring_cmd_done(cmd, ret, 0);
#endif
}

/*
 * Issue context of a command about to park: lets io_uring cancel it (ring
 * closed, exec()) where the kernel can; a no-op before 6.7.
 */
static inline void vaccel_cmd_cancelable(struct io_uring_cmd *cmd,
					 unsigned int issue_flags)
{
#if VACCEL_CMD_CANCELABLE
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
#endif
}

/* Whether this issue of a command is io_uring asking to cancel it. */
static inline bool vaccel_cmd_is_cancel(unsigned int issue_flags)
{
#if VACCEL_CMD_CANCELABLE
	return issue_flags & IO_URING_F_CANCEL;
#else
	return false;
#endif
}

/*
 * Before 6.7, the monitor's view of a parked command's ring: true once the
 * ring is being torn down (its file closed) while the command is parked.
 * A uring_cmd is the first member of its io_kiocb, whose ctx holds the
 * ring's references; the command holds one of them while parked, so ctx
 * is alive while the caller owns the parked command. From 6.7 io_uring
 * cancels the command itself and this is not needed.
 */
static inline bool vaccel_cmd_ring_dying(struct io_uring_cmd *cmd)
{
#if VACCEL_CMD_CANCELABLE
	return false;
#else
	struct io_kiocb *req = (struct io_kiocb *)cmd;

	return percpu_ref_is_dying(&req->ctx->refs);
#endif
}

/* mmap_lock of `mm` held for reading. Pins pages of another task's mm. */
static inline long vaccel_pin_remote(struct mm_struct *mm, unsigned long start,
				     unsigned long nr_pages,
				     unsigned int gup_flags,
				     struct page **pages)
{
#if KERNEL_VERSION(6, 5, 0) <= VACCEL_KERNEL
	return pin_user_pages_remote(mm, start, nr_pages, gup_flags, pages,
				     NULL);
#else
	return pin_user_pages_remote(mm, start, nr_pages, gup_flags, pages,
				     NULL, NULL);
#endif
}

/* mmap_lock held for writing (an ->mmap call). Sets `flags` on `vma`. */
static inline void vaccel_vm_flags_set(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
#if KERNEL_VERSION(6, 3, 0) <= VACCEL_KERNEL
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

#endif /* VACCEL_COMPAT_H */
