// SPDX-License-Identifier: GPL-2.0
/*
 * BUFFER_MAP through /dev/vaccel: a session's map table and
 * mmap() of its tokens.
 *
 * Owns the files the daemon handed over for BUFFER_MAP answers (the
 * buffers' memfds), one table per session, and the mapping of those files
 * into the client. Decides:
 *  - a token is a page-aligned mmap() offset of the session's own file,
 *    never reused in the session; the same file, offset and size give the
 *    same token;
 *  - the table holds VACCEL_SRV_MAPS_MAX entries; an entry only the table
 *    still refers to (the daemon freed the buffer, no mapping is left) is
 *    forgotten at the next BUFFER_MAP;
 *  - mmap() hands the vma to the buffer's file itself (vma_set_file and
 *    the file's own ->mmap), so the client maps exactly the pages the
 *    daemon's buffer lives in, and the mapping holds that file, not the
 *    session: it outlives the session's close.
 */
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "vaccel_drv.h"

struct vaccel_map {
	struct file *file;	/* counted */
	u64 offset;		/* of the buffer in the file, page-aligned */
	u64 bytes;		/* the buffer's size */
};

/* Client task (open). */
void vaccel_maps_init(struct vaccel_session *session)
{
	mutex_init(&session->map_lock);
	xa_init(&session->maps);
}

/* map_lock held. Drops the entries nobody but the table refers to. */
static void vaccel_maps_prune_locked(struct vaccel_session *session)
{
	struct vaccel_map *map;
	unsigned long key;

	xa_for_each(&session->maps, key, map) {
		if (file_count(map->file) > 1)
			continue;
		xa_erase(&session->maps, key);
		fput(map->file);
		kfree(map);
		session->map_count--;
	}
}

/*
 * Client task (BUFFER_MAP answered). Enters `file` (the caller keeps its
 * own reference) into the session's table. Returns 0 with *token set,
 * -EDQUOT when the table is full, or -ENOMEM.
 */
int vaccel_maps_add(struct vaccel_session *session, struct file *file,
		    u64 offset, u64 bytes, u64 *token)
{
	struct vaccel_map *map;
	unsigned long key;
	int ret;

	mutex_lock(&session->map_lock);
	vaccel_maps_prune_locked(session);
	xa_for_each(&session->maps, key, map) {
		if (map->file == file && map->offset == offset &&
		    map->bytes == bytes) {
			*token = (u64)key << PAGE_SHIFT;
			mutex_unlock(&session->map_lock);
			return 0;
		}
	}
	if (session->map_count >= VACCEL_SRV_MAPS_MAX) {
		mutex_unlock(&session->map_lock);
		return -EDQUOT;
	}
	map = kmalloc(sizeof(*map), GFP_KERNEL);
	if (!map) {
		mutex_unlock(&session->map_lock);
		return -ENOMEM;
	}
	map->file = get_file(file);
	map->offset = offset;
	map->bytes = bytes;
	key = ++session->map_next;
	ret = xa_insert(&session->maps, key, map, GFP_KERNEL);
	if (ret) {
		mutex_unlock(&session->map_lock);
		fput(map->file);
		kfree(map);
		return -ENOMEM;
	}
	session->map_count++;
	mutex_unlock(&session->map_lock);
	*token = (u64)key << PAGE_SHIFT;
	return 0;
}

/* Process context: the session's file is released. */
void vaccel_maps_release(struct vaccel_session *session)
{
	struct vaccel_map *map;
	unsigned long key;

	xa_for_each(&session->maps, key, map) {
		fput(map->file);
		kfree(map);
	}
	xa_destroy(&session->maps);
	mutex_destroy(&session->map_lock);
}

/*
 * Client task, mmap_lock held for writing: mmap() of the session's file.
 * The offset must be a token of this session, the mapping shared and at
 * most the buffer's size rounded up to pages.
 */
int vaccel_client_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vaccel_session *session = file->private_data;
	unsigned long length = vma->vm_end - vma->vm_start;
	struct file *target = NULL;
	struct vaccel_map *map;
	u64 offset = 0, bytes = 0;

	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	mutex_lock(&session->map_lock);
	map = xa_load(&session->maps, vma->vm_pgoff);
	if (map) {
		target = get_file(map->file);
		offset = map->offset;
		bytes = map->bytes;
	}
	mutex_unlock(&session->map_lock);
	if (!target)
		return -EINVAL;
	if (length > PAGE_ALIGN(bytes)) {
		fput(target);
		return -EINVAL;
	}
	/*
	 * From here the vma is the target file's (as dma_buf_mmap() does):
	 * if its ->mmap fails, the caller's unwinding puts that file. The
	 * file may hold other buffers past this one: mremap() must not grow
	 * the mapping into them.
	 */
	vaccel_vm_flags_set(vma, VM_DONTEXPAND);
	vma->vm_pgoff = offset >> PAGE_SHIFT;
	vma_set_file(vma, target);
	fput(target);
	return call_mmap(vma->vm_file, vma);
}
