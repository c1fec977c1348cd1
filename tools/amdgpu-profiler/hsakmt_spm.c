// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * libhsakmt_amdgpu_spm.so: hsaKmtSPMAcquire(), hsaKmtSPMRelease() and
 * hsaKmtSPMSetDestBuffer() over DRM_IOCTL_AMDGPU_PROFILER, for an
 * unmodified ROCm stack that loads it with LD_PRELOAD in front of the real
 * libhsakmt (README.md, "hsakmt provider", says when that reaches ROCr).
 *
 * A node is resolved once, on its first SPM call: its libhsakmt user node
 * id is mapped to a KFD topology node the way libhsakmt numbers them, and
 * through that node's drm_render_minor to the render node of its device or
 * partition, which this library opens for itself. If GET_VER answers there,
 * the node's SPM calls go to the profiler ioctl on that file; otherwise
 * (CPU node, no render node, kernel without the profiler, no topology at
 * all) they go to the real libhsakmt, that is to KFD. They go there too
 * from the first ACQUIRE on that answers EOPNOTSUPP: the device has no SPM
 * behind the profiler ioctl (an SR-IOV VF, or an IP without SPM hooks),
 * where a KFD with AMDKFD_IOC_RLC_SPM may still have it.
 *
 * Environment:
 *   HSAKMT_SPM_DISABLE=1   always use the real libhsakmt
 *   HSAKMT_SPM_DEBUG=1     say on stderr how each node was resolved
 *   HSAKMT_SPM_ROOT=DIR    read DIR/sys/class/kfd/kfd/topology and
 *                          DIR/sys/module/amdgpu/parameters, and open
 *                          DIR/dev/dri/renderD<minor> (tests)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <hsakmt.h>

#include "amdgpu_spm_params.h"
#include "amdgpu_spm_uapi.h"
#include "hsakmt_spm.h"

#define PUBLIC __attribute__((visibility("default")))

#define TOPOLOGY	"/sys/class/kfd/kfd/topology"
#define MAX_NODES	256	/* user node ids this provider handles */
#define PREFIX		"hsakmt-spm: "
/* The largest buf_size SET_DEST_BUF takes (uAPI kernel-doc). */
#define AMDGPU_SPM_MAX_DEST_SIZE	(256u << 20)

enum backend {
	NODE_UNRESOLVED,
	NODE_PROFILER,	/* DRM_IOCTL_AMDGPU_PROFILER on @fd */
	NODE_KFD,	/* the real libhsakmt */
};

/*
 * One libhsakmt user node. Guarded by @lock. @fd never changes once set
 * and stays open until hsakmt_spm_reset(), also when the node moves to
 * KFD, so that a call that still uses it never meets a reused number.
 */
struct node {
	enum backend backend;
	int fd;			/* -1 none */
	bool answered;		/* an ACQUIRE got an answer but EOPNOTSUPP */
	uint32_t sysfs_id;
	uint32_t minor;
	uint32_t num_xcc;	/* num_xcc of the topology node, 0 unknown */
	uint32_t version;	/* profiler interface */
	void *cur_dest;		/* buffer installed last, for the 1.1 check */
	uint32_t cur_size;
	bool warned_shares;
	bool said_stopped;	/* EIO reported for this acquisition */
	char path[PATH_MAX];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct node nodes[MAX_NODES];

static int sys_open(const char *path, int flags)
{
	return open(path, flags);
}

static int sys_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg);
}

static void *sys_real(const char *name)
{
	void *f, *h;

	/* The definition that the provider's own one hides. */
	f = dlvsym(RTLD_NEXT, name, "HSAKMT_1");
	if (!f)
		f = dlsym(RTLD_NEXT, name);
	if (f)
		return f;
	/*
	 * libhsakmt was loaded into a local scope, as the dependency of a
	 * dlopen()ed libhsa-runtime64 (Debian's needs libhsakmt.so.1).
	 */
	h = dlopen("libhsakmt.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return NULL;
	f = dlvsym(h, name, "HSAKMT_1");
	if (!f)
		f = dlsym(h, name);
	dlclose(h);	/* only drops the reference NOLOAD took */
	return f;
}

struct hsakmt_spm_sys hsakmt_spm_sys = {
	.open = sys_open,
	.close = close,
	.ioctl = sys_ioctl,
	.real = sys_real,
};

static FILE *err_file(void)
{
	return hsakmt_spm_sys.err ? hsakmt_spm_sys.err : stderr;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs(PREFIX, err_file());
	va_start(ap, fmt);
	vfprintf(err_file(), fmt, ap);
	va_end(ap);
	fflush(err_file());
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

#define debug(...) do { if (env_on("HSAKMT_SPM_DEBUG")) say(__VA_ARGS__); } while (0)

/* Fork while another thread resolves a node: the child's lock is free. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void hsakmt_spm_reset(void)
{
	unsigned int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_NODES; i++) {
		if (nodes[i].backend != NODE_UNRESOLVED && nodes[i].fd >= 0)
			hsakmt_spm_sys.close(nodes[i].fd);
		memset(&nodes[i], 0, sizeof(nodes[i]));
	}
	pthread_mutex_unlock(&lock);
}

/* ---- KFD topology ---- */

static const char *root(void)
{
	const char *r = getenv("HSAKMT_SPM_ROOT");

	return r ? r : "";
}

/* "name value" lines; returns the value of @key or @dflt. */
static unsigned long long prop(const char *props, const char *key,
			       unsigned long long dflt)
{
	size_t n = strlen(key);
	const char *p = props;

	while (p && *p) {
		if (!strncmp(p, key, n) && p[n] == ' ')
			return strtoull(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return dflt;
}

static int read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		fclose(f);
		return -e;
	}
	fclose(f);
	return 0;
}

/*
 * The render node of a GPU node, opened: >= 0, or -errno. libhsakmt
 * opens the same path (hsakmt_open_drm_render_device()).
 */
static int open_render(uint32_t minor, char *path, size_t size)
{
	int fd;

	snprintf(path, size, "%s/dev/dri/renderD%u", root(), minor);
	fd = hsakmt_spm_sys.open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct topo_node {
	uint32_t sysfs_id;
	uint32_t gpu_id;
	uint32_t minor;
	uint32_t num_xcc;
	int fd;			/* the render node, open, for a GPU node */
	char path[PATH_MAX];
};

/*
 * Find user node @user as libhsakmt numbers them
 * (topology_sysfs_check_node_supported()): every sysfs node 0..N-1 counts,
 * CPU nodes (gpu_id 0) included, except a GPU node whose gpu_id reads
 * EPERM or whose render node is missing (ENOENT) or forbidden (EPERM), as
 * in a container given only some GPUs. Returns 0, or -1 with *why.
 */
static int find_node(uint32_t user, struct topo_node *out, char *why,
		     size_t why_size)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], props[16384];
	uint32_t count = 0, kept = 0, i;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s" TOPOLOGY "/nodes", root());
	d = opendir(dir);
	if (!d) {
		snprintf(why, why_size, "no KFD topology at %s (%s): no amdgpu device here",
			 dir, strerror(errno));
		return -1;
	}
	/* libhsakmt counts the entries and reads them as 0..count-1. */
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			count++;
	closedir(d);

	for (i = 0; i < count; i++) {
		unsigned long long gpu_id;
		int fd = -1, ret;

		snprintf(path, sizeof(path), "%s/%u/gpu_id", dir, i);
		ret = read_file(path, props, sizeof(props));
		if (ret == -EPERM)
			continue;
		if (ret || sscanf(props, "%llu", &gpu_id) != 1) {
			snprintf(why, why_size, "cannot read %s", path);
			return -1;
		}
		memset(out, 0, sizeof(*out));
		out->sysfs_id = i;
		out->gpu_id = (uint32_t)gpu_id;
		out->fd = -1;
		if (gpu_id) {
			snprintf(path, sizeof(path), "%s/%u/properties", dir, i);
			if (read_file(path, props, sizeof(props))) {
				snprintf(why, why_size, "cannot read %s", path);
				return -1;
			}
			out->minor = (uint32_t)prop(props, "drm_render_minor", 0);
			out->num_xcc = (uint32_t)prop(props, "num_xcc", 0);
			if (!out->minor) {
				snprintf(why, why_size, "%s has no drm_render_minor",
					 path);
				return -1;
			}
			fd = open_render(out->minor, out->path,
					 sizeof(out->path));
			if (fd == -ENOENT || fd == -EPERM)
				continue;	/* not this process's GPU */
			if (fd < 0) {
				snprintf(why, why_size, "cannot open %s: %s",
					 out->path, strerror(-fd));
				return -1;
			}
		}
		if (kept++ == user) {
			out->fd = fd;
			return 0;
		}
		if (fd >= 0)
			hsakmt_spm_sys.close(fd);
	}
	snprintf(why, why_size, "no node %u (%u nodes in %s)", user, kept, dir);
	return -1;
}

static int profiler_ioctl(int fd, struct drm_amdgpu_profiler_args *args)
{
	int ret;

	do {
		ret = hsakmt_spm_sys.ioctl(fd, DRM_IOCTL_AMDGPU_PROFILER, args);
	} while (ret == -1 && errno == EAGAIN);
	return ret == -1 ? errno : 0;
}

/* Decide once where node @user's SPM calls go. Called with @lock held. */
static void resolve_locked(uint32_t user, struct node *n)
{
	struct drm_amdgpu_profiler_args args;
	struct topo_node t;
	char why[PATH_MAX + 128];
	int ret;

	n->backend = NODE_KFD;
	n->fd = -1;
	if (env_on("HSAKMT_SPM_DISABLE")) {
		debug("node %u: HSAKMT_SPM_DISABLE is set: libhsakmt (KFD)\n",
		      user);
		return;
	}
	if (find_node(user, &t, why, sizeof(why))) {
		debug("node %u: %s: libhsakmt (KFD)\n", user, why);
		return;
	}
	if (!t.gpu_id) {
		debug("node %u (sysfs node %u) is a CPU node: libhsakmt (KFD)\n",
		      user, t.sysfs_id);
		return;
	}

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	ret = profiler_ioctl(t.fd, &args);
	if (ret) {
		debug("node %u: %s: no DRM_AMDGPU_PROFILER (GET_VER: %s): libhsakmt (KFD)\n",
		      user, t.path, strerror(ret));
		hsakmt_spm_sys.close(t.fd);
		return;
	}
	if (AMDGPU_PROFILER_VERSION_MAJOR(args.data.version) != 1) {
		say("node %u: %s: profiler interface %u.%u is not one this provider knows (1.x): using libhsakmt (KFD)\n",
		    user, t.path,
		    AMDGPU_PROFILER_VERSION_MAJOR(args.data.version),
		    AMDGPU_PROFILER_VERSION_MINOR(args.data.version));
		hsakmt_spm_sys.close(t.fd);
		return;
	}
	n->backend = NODE_PROFILER;
	n->fd = t.fd;
	n->sysfs_id = t.sysfs_id;
	n->minor = t.minor;
	n->num_xcc = t.num_xcc;
	n->version = args.data.version;
	snprintf(n->path, sizeof(n->path), "%s", t.path);
	debug("node %u (sysfs node %u, gpu_id %u, %u XCCs): %s, profiler interface %u.%u\n",
	      user, t.sysfs_id, t.gpu_id, t.num_xcc, t.path,
	      AMDGPU_PROFILER_VERSION_MAJOR(n->version),
	      AMDGPU_PROFILER_VERSION_MINOR(n->version));
}

/*
 * Node @user resolved, and in *@be where its calls go now; NULL when it is
 * beyond what the provider handles.
 */
static struct node *node_get(uint32_t user, enum backend *be)
{
	struct node *n;

	*be = NODE_KFD;
	if (user >= MAX_NODES)
		return NULL;
	n = &nodes[user];
	pthread_mutex_lock(&lock);
	if (n->backend == NODE_UNRESOLVED) {
		int saved = errno;	/* what a fallback's caller sees */

		resolve_locked(user, n);
		errno = saved;
	}
	*be = n->backend;
	pthread_mutex_unlock(&lock);
	return n;
}

/*
 * errno to HSAKMT_STATUS, after libhsakmt's own choices elsewhere
 * (queues.c, debug.c, svm.c, topology.c); the kernel's errno stays in
 * errno for callers that look.
 */
static HSAKMT_STATUS status_of(int err)
{
	switch (err) {
	case 0:
		return HSAKMT_STATUS_SUCCESS;
	case EINVAL:
	case EFAULT:
		return HSAKMT_STATUS_INVALID_PARAMETER;
	case EBUSY:
	case EIO:	/* SPM stopped by the kernel until Release */
		return HSAKMT_STATUS_UNAVAILABLE;
	case EPERM:
	case EOPNOTSUPP:
	case ENODEV:
	case ENOTTY:
		return HSAKMT_STATUS_NOT_SUPPORTED;
	case ENOMEM:
		return HSAKMT_STATUS_NO_MEMORY;
	case ENOSPC:
	case EMFILE:
	case ENFILE:
		return HSAKMT_STATUS_OUT_OF_RESOURCES;
	default:
		return HSAKMT_STATUS_ERROR;
	}
}

static HSAKMT_STATUS ret_status(int err)
{
	if (err)
		errno = err;
	return status_of(err);
}

static int spm_simple(struct node *n, uint32_t op)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	do {
		memset(&args, 0, sizeof(args));
		args.op = AMDGPU_PROFILER_OP_SPM;
		args.data.spm.op = op;
		ret = profiler_ioctl(n->fd, &args);
	} while (ret == EINTR);
	return ret;
}

typedef HSAKMT_STATUS (*node_fn)(HSAuint32);
typedef HSAKMT_STATUS (*set_dest_fn)(HSAuint32, HSAuint32, HSAuint32 *,
				     HSAuint32 *, void *, bool *);

static void *real_or_complain(const char *name)
{
	void *f = hsakmt_spm_sys.real(name);

	if (!f)
		say("%s: no libhsakmt to hand the call to (is libhsakmt.so.1 loaded?)\n",
		    name);
	return f;
}

/*
 * The first ACQUIRE on a node answered EOPNOTSUPP: the device has no SPM
 * behind the profiler ioctl (an SR-IOV VF, or an IP without SPM hooks),
 * but a KFD with AMDKFD_IOC_RLC_SPM (ROCm's DKMS driver) may have it. From
 * now on the node's calls go to the real libhsakmt; this ACQUIRE too.
 * Once an ACQUIRE got another answer, EOPNOTSUPP means the device went
 * away, and stays the answer.
 */
static bool kfd_instead_locked(struct node *n)
{
	if (n->answered)
		return false;
	n->backend = NODE_KFD;
	return true;
}

PUBLIC
HSAKMT_STATUS HSAKMTAPI hsaKmtSPMAcquire(HSAuint32 PreferredNode)
{
	enum backend be;
	struct node *n = node_get(PreferredNode, &be);
	int saved = errno, ret;
	HSAKMT_STATUS st;
	node_fn real;
	bool to_kfd;

	if (!n || be == NODE_KFD) {
		real = (node_fn)real_or_complain("hsaKmtSPMAcquire");
		return real ? real(PreferredNode) : HSAKMT_STATUS_NOT_SUPPORTED;
	}
	ret = spm_simple(n, AMDGPU_SPM_OP_ACQUIRE);
	pthread_mutex_lock(&lock);
	to_kfd = ret == EOPNOTSUPP && kfd_instead_locked(n);
	if (ret != EOPNOTSUPP)
		n->answered = true;
	pthread_mutex_unlock(&lock);
	if (to_kfd) {
		debug("node %u (%s): ACQUIRE: EOPNOTSUPP: no SPM behind the profiler ioctl here: libhsakmt (KFD) from now on\n",
		      PreferredNode, n->path);
		real = (node_fn)real_or_complain("hsaKmtSPMAcquire");
		if (!real)
			return ret_status(ret);
		errno = saved;	/* KFD's answer, not ours */
		st = real(PreferredNode);
		/* Quiet where KFD has SPM; otherwise say where both failed. */
		if (st != HSAKMT_STATUS_SUCCESS)
			say("node %u (%s): no SPM on this device through the profiler ioctl (EOPNOTSUPP: an SR-IOV virtual function, or a GPU this kernel has no SPM support for), and libhsakmt (KFD) refused it too (status %d)\n",
			    PreferredNode, n->path, st);
		return st;
	}
	switch (ret) {
	case 0:
		pthread_mutex_lock(&lock);
		n->cur_dest = NULL;
		n->said_stopped = false;
		pthread_mutex_unlock(&lock);
		break;
	case EPERM: {
		/*
		 * With the default amdgpu.spm_paranoid a process without
		 * CAP_PERFMON gets this, and ROCm's profilers abort when
		 * Acquire fails: say what the parameter reads now and what
		 * to change.
		 */
		char why[3072];

		say("node %u (%s): SPM refused (EPERM): %s\n", PreferredNode,
		    n->path,
		    amdgpu_spm_explain_refusal(ret, root(), why, sizeof(why)));
		break;
	}
	case ENODEV:
		say("node %u (%s): no SPM (ENODEV): the amdgpu driver could not set up the VMID that SPM writes through when it loaded (see the kernel log), or the device is gone\n",
		    PreferredNode, n->path);
		break;
	case EBUSY:
		say("node %u (%s): SPM busy (EBUSY): another process profiles this partition, or a graphics client reserved a VMID for SPM\n",
		    PreferredNode, n->path);
		break;
	case EOPNOTSUPP:
		debug("node %u (%s): no SPM on this device any more (EOPNOTSUPP)\n",
		      PreferredNode, n->path);
		break;
	default:
		debug("node %u (%s): ACQUIRE: %s\n", PreferredNode, n->path,
		      strerror(ret));
		break;
	}
	return ret_status(ret);
}

PUBLIC
HSAKMT_STATUS HSAKMTAPI hsaKmtSPMRelease(HSAuint32 PreferredNode)
{
	enum backend be;
	struct node *n = node_get(PreferredNode, &be);
	node_fn real;
	int ret;

	if (!n || be == NODE_KFD) {
		real = (node_fn)real_or_complain("hsaKmtSPMRelease");
		return real ? real(PreferredNode) : HSAKMT_STATUS_NOT_SUPPORTED;
	}
	/*
	 * aqlprofile's ~ManagerThread releases after a failed Acquire too and
	 * ignores the answer: -EINVAL (INVALID_PARAMETER) when nobody owns the
	 * partition's SPM, -EBUSY (UNAVAILABLE) when another process does,
	 * which is the usual reason the Acquire failed.
	 */
	ret = spm_simple(n, AMDGPU_SPM_OP_RELEASE);
	if (ret)
		debug("node %u (%s): RELEASE: %s\n", PreferredNode, n->path,
		      strerror(ret));
	pthread_mutex_lock(&lock);
	if (!ret)
		n->cur_dest = NULL;
	pthread_mutex_unlock(&lock);
	return ret_status(ret);
}

/*
 * On uAPI 1.1 the share headers say how many shares the kernel made;
 * aqlprofile finds them with the XCC count of the agent its caller
 * registered. Warn once if the topology's num_xcc disagrees, since every
 * share after the first would then be misread by a caller that counts
 * the way the topology does.
 */
static void check_shares_locked(struct node *n, const void *retired,
				uint32_t size)
{
	struct amdgpu_spm_hdr h;

	if (!retired || n->warned_shares || !n->num_xcc ||
	    n->version < AMDGPU_PROFILER_VERSION_1_1 ||
	    size < sizeof(h))
		return;
	memcpy(&h, retired, sizeof(h));
	if (h.version != n->version ||
	    AMDGPU_SPM_HDR_NUM_SHARES(h.xcc_info) == n->num_xcc)
		return;
	n->warned_shares = true;
	say("%s: the kernel split the buffer into %u shares, the KFD topology says the node has %u XCCs\n",
	    n->path, AMDGPU_SPM_HDR_NUM_SHARES(h.xcc_info), n->num_xcc);
}

PUBLIC
HSAKMT_STATUS HSAKMTAPI hsaKmtSPMSetDestBuffer(HSAuint32 PreferredNode,
					       HSAuint32 SizeInBytes,
					       HSAuint32 *timeout,
					       HSAuint32 *SizeCopied,
					       void *DestMemoryAddress,
					       bool *isSPMDataLoss)
{
	enum backend be;
	struct node *n = node_get(PreferredNode, &be);
	struct drm_amdgpu_profiler_args args;
	uint32_t want = timeout ? *timeout : 0, left = want;
	set_dest_fn real;
	bool said;
	int ret;

	if (!n || be == NODE_KFD) {
		real = (set_dest_fn)real_or_complain("hsaKmtSPMSetDestBuffer");
		return real ? real(PreferredNode, SizeInBytes, timeout,
				   SizeCopied, DestMemoryAddress,
				   isSPMDataLoss) :
			      HSAKMT_STATUS_NOT_SUPPORTED;
	}

	do {
		memset(&args, 0, sizeof(args));
		args.op = AMDGPU_PROFILER_OP_SPM;
		args.data.spm.op = AMDGPU_SPM_OP_SET_DEST_BUF;
		args.data.spm.dest_buf = (uintptr_t)DestMemoryAddress;
		/*
		 * No buffer means stop, whatever the size says (the
		 * single-XCC KFD and the posted libdrm API take any size
		 * with it); the profiler ioctl wants 0.
		 */
		args.data.spm.buf_size = DestMemoryAddress ? SizeInBytes : 0;
		args.data.spm.timeout = left;
		ret = profiler_ioctl(n->fd, &args);
		/* A signal cut the wait: the kernel wrote what was left. */
		if (ret == EINTR)
			left = args.data.spm.timeout;
	} while (ret == EINTR);

	if (SizeCopied)
		*SizeCopied = ret ? 0 : args.data.spm.bytes_copied;
	/*
	 * Any non-zero word, a full share (AMDGPU_SPM_LOSS_FULL) included:
	 * KFD's SPM ioctl flags a full buffer too, and this is its caller.
	 */
	if (isSPMDataLoss)
		*isSPMDataLoss = !ret && args.data.spm.has_data_loss;
	/*
	 * The kernel wrote the time left back; hand the caller its own
	 * timeout instead, as KFD does today: aqlprofile sets the variable
	 * once before its loop and would otherwise wait less on every call
	 * until it spun with 0.
	 */
	if (timeout)
		*timeout = want;

	pthread_mutex_lock(&lock);
	if (!ret) {
		check_shares_locked(n, n->cur_dest, n->cur_size);
		n->cur_dest = DestMemoryAddress;
		n->cur_size = DestMemoryAddress ? SizeInBytes : 0;
	}
	said = n->said_stopped;
	if (ret == EIO)
		n->said_stopped = true;
	pthread_mutex_unlock(&lock);

	/*
	 * The kernel found the SPM ring registers changed behind its back
	 * (work submitted to the partition wrote them) and stopped SPM: the
	 * one failure an administrator must hear of. Once per acquisition:
	 * the caller may keep calling.
	 */
	if (ret == EIO && !said)
		say("%s: SET_DEST_BUF: EIO: the kernel stopped SPM on this partition because its SPM ring registers were changed behind its back, by work submitted to the partition; nothing more is copied and only Release is left (a new Acquire starts over). See the Security section of Documentation/gpu/amdgpu/profiler.rst and the kernel log.\n",
		    n->path);
	else if (ret == ENOMEM)
		say("%s: SET_DEST_BUF: ENOMEM: out of memory, or the %u-byte buffer at %p could not be pinned within RLIMIT_MEMLOCK. Anonymous, shmem and hugetlb buffers are pinned, and count against RLIMIT_MEMLOCK (raise 'ulimit -l') unless the process has CAP_IPC_LOCK; the kernel keeps the last three buffers pinned. Buffers mapped through the render node (VM_PFNMAP, such as ROCr's CPU pool allocations) are not pinned.\n",
		    n->path, SizeInBytes, DestMemoryAddress);
	/* KFD takes these; the profiler ioctl does not. */
	else if (ret == EINVAL && DestMemoryAddress &&
		 (uintptr_t)DestMemoryAddress % 32)
		say("%s: SET_DEST_BUF: EINVAL: the destination %p is not 32-byte aligned\n",
		    n->path, DestMemoryAddress);
	else if (ret == EINVAL && DestMemoryAddress &&
		 SizeInBytes > AMDGPU_SPM_MAX_DEST_SIZE)
		say("%s: SET_DEST_BUF: EINVAL: %u bytes is more than the %u the kernel takes per buffer\n",
		    n->path, SizeInBytes, AMDGPU_SPM_MAX_DEST_SIZE);
	else if (ret)
		debug("node %u (%s): SET_DEST_BUF: %s\n", PreferredNode,
		      n->path, strerror(ret));
	return ret_status(ret);
}
