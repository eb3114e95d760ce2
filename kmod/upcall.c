// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: upcall request lifecycle.
 *
 * DOC: upcall protocol
 *
 * A request (struct s3cfs_req) is created by a reader that needs something
 * from the daemon (a chunk, a lookup, a listing), inserted into the global
 * request table s3cfs_reqs under a fresh id, and sent to the registered
 * daemon socket if there is one. The daemon answers with the same command,
 * id and mount id; s3cfs_upcall_reply() takes the request out of the table
 * (only if the answer matches it) and completes it. Completion happens
 * exactly once (S3CFS_REQ_DONE), whoever gets there first: the answer, the
 * last waiter giving up (timeout or fatal signal), or unmount.
 *
 * References: the table holds one while the request is in it; each waiter
 * and each sender holds one. The table reference is dropped by whoever
 * erases the request from the table.
 *
 * Daemon death: the socket's NETLINK_URELEASE clears the daemon port and
 * marks every request unsent; requests stay in the table. A daemon that
 * registers gets a MOUNT for every live mount, then every unsent request.
 *
 *   CPU0 (reader)                     CPU1 (daemon reply)
 *   s3cfs_req_submit()
 *     xa_alloc(req) -- table ref
 *     s3cfs_nl_send()
 *                                     s3cfs_upcall_reply()
 *                                       xa_lock; match; __xa_erase
 *                                       s3cfs_req_complete()
 *   s3cfs_req_wait() returns status     s3cfs_req_put() -- table ref
 *   s3cfs_req_put() -- last ref, freed
 */
#include "s3cachefs.h"
#include <linux/xarray.h>
#include <linux/llist.h>
#include <net/sock.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>
#include <linux/moduleparam.h>
#include <linux/module.h>
#include <linux/delay.h>

#define CREATE_TRACE_POINTS
#include "trace.h"

#define S3CFS_TRACE(ev, req, st)					\
	trace_##ev((req)->id, (req)->sbi->mount_id, (req)->cmd,		\
		   (req)->offset, (req)->length, (st))

static unsigned int max_pending = 4096;
module_param(max_pending, uint, 0644);
MODULE_PARM_DESC(max_pending, "Most upcall requests queued at once, all mounts (default 4096)");

static unsigned int max_pending_mount = 1024;
module_param(max_pending_mount, uint, 0644);
MODULE_PARM_DESC(max_pending_mount, "Most upcall requests queued at once by one mount (default 1024)");

static unsigned int max_pending_user = 256;
module_param(max_pending_user, uint, 0644);
MODULE_PARM_DESC(max_pending_user, "Most upcall requests queued at once for one user (fsuid, not root) in one mount (default 256, 0: no limit)");

/* How often a mount with requests pending looks for expired ones. */
#define S3CFS_EXPIRE_PERIOD	HZ

/* All pending requests of all mounts, by id. */
static DEFINE_XARRAY_ALLOC1(s3cfs_reqs);
static u32 s3cfs_next_id;
static atomic_t s3cfs_nr_pending = ATOMIC_INIT(0);
/* Taking a slot checks both counts and raises both at once. */
static DEFINE_SPINLOCK(s3cfs_slot_lock);
static DECLARE_WAIT_QUEUE_HEAD(s3cfs_pending_wq);

/*
 * The registered daemon: its socket (a reference held) and port id. The
 * port id alone does not name it: once the socket is released, any
 * socket (any user's: binding a netlink port id needs no privilege) may
 * bind the same id, before our NETLINK_URELEASE notifier has run. So
 * answers are taken only from this very socket (s3cfs_daemon_is()), and
 * a message goes to the port id only while the socket's file is pinned
 * (s3cfs_daemon_pin()), which keeps the port bound to it.
 * s3cfs_daemon_ready is false while REGISTER announces the mounts:
 * requests wait until then.
 */
static DEFINE_SPINLOCK(s3cfs_daemon_lock);
static struct sock *s3cfs_daemon_sk;
static u32 s3cfs_daemon_portid;
static bool s3cfs_daemon_ready;
static u32 s3cfs_daemon_ver;	/* the protocol version it registered with */

static void s3cfs_resend_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(s3cfs_resend_work, s3cfs_resend_workfn);

/* The port id of the registered daemon, 0 if none (or not ready yet). */
static u32 s3cfs_daemon(void)
{
	u32 portid;

	spin_lock(&s3cfs_daemon_lock);
	portid = s3cfs_daemon_ready ? s3cfs_daemon_portid : 0;
	spin_unlock(&s3cfs_daemon_lock);
	return portid;
}

/**
 * s3cfs_daemon_present() - is a daemon registered?
 *
 * Return: true if a daemon socket is registered.
 */
bool s3cfs_daemon_present(void)
{
	return s3cfs_daemon() != 0;
}

/**
 * s3cfs_daemon_version() - the registered daemon's protocol version
 *
 * Return: S3CFS_GENL_VERSION_MIN.. S3CFS_GENL_VERSION, or 0 with no daemon.
 */
unsigned int s3cfs_daemon_version(void)
{
	u32 ver;

	spin_lock(&s3cfs_daemon_lock);
	ver = s3cfs_daemon_ready ? s3cfs_daemon_ver : 0;
	spin_unlock(&s3cfs_daemon_lock);
	return ver;
}

/**
 * s3cfs_daemon_is() - did the registered daemon send this?
 * @sk: the sending socket (NETLINK_CB(skb).sk)
 *
 * The socket, not its port id: a port id passes to whichever socket
 * binds it next once the daemon's is released. Our reference on the
 * registered socket keeps its memory from being reused for another.
 *
 * Return: true if @sk is the registered daemon's socket.
 */
bool s3cfs_daemon_is(const struct sock *sk)
{
	bool is;

	spin_lock(&s3cfs_daemon_lock);
	is = sk && sk == s3cfs_daemon_sk;
	spin_unlock(&s3cfs_daemon_lock);
	return is;
}

/**
 * s3cfs_daemon_pin() - keep the registered daemon's port bound for a send
 * @portid: the port id the caller means to send to
 *
 * A netlink socket keeps its port id until it is released, and it is
 * released only when the last reference to its file goes. The file
 * reference returned keeps it so across a unicast to @portid, which then
 * reaches the daemon's socket and no other:
 *
 *   CPU0 (send to the daemon)         CPU1 (daemon exits) CPU2 (any user)
 *   genlmsg_unicast(portid)
 *                                     netlink_remove()
 *                                                         bind(portid)
 *     looks portid up: CPU2's
 *                                     NETLINK_URELEASE
 *
 * was a request, with its path, delivered to another user's socket.
 * With the pin, CPU1's release waits for CPU0's s3cfs_daemon_unpin(); a
 * file already on its way out (no reference left) is not pinned.
 *
 * Return: a file reference to fput() after the send, or NULL if @portid
 * is not the registered daemon's or its socket is being released.
 */
struct file *s3cfs_daemon_pin(u32 portid)
{
	struct file *file = NULL;
	struct socket *sock;
	struct sock *sk;

	spin_lock(&s3cfs_daemon_lock);
	sk = s3cfs_daemon_sk;
	if (!sk || !portid || s3cfs_daemon_portid != portid)
		goto out;
	/*
	 * sock_orphan() clears sk_socket under sk_callback_lock: while it
	 * is set, the socket and its file are not freed yet (the file may
	 * be on its way, with no reference left).
	 */
	read_lock_bh(&sk->sk_callback_lock);
	sock = sk->sk_socket;
	if (sock && sock->file && s3cfs_get_file_not_zero(sock->file))
		file = sock->file;
	read_unlock_bh(&sk->sk_callback_lock);
out:
	spin_unlock(&s3cfs_daemon_lock);
	return file;
}

/* Last references to a daemon's socket file, dropped by a kworker. */
struct s3cfs_unpin {
	struct llist_node node;
	struct file *file;
};

static LLIST_HEAD(s3cfs_unpin_list);

static void s3cfs_unpin_workfn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&s3cfs_unpin_list);
	struct s3cfs_unpin *u, *next;

	llist_for_each_entry_safe(u, next, list, node) {
		fput(u->file);
		kfree(u);
	}
}

static DECLARE_WORK(s3cfs_unpin_work, s3cfs_unpin_workfn);

/**
 * s3cfs_daemon_unpin() - drop what s3cfs_daemon_pin() took
 * @file: its return value
 */
void s3cfs_daemon_unpin(struct file *file)
{
	struct s3cfs_unpin *u;

	if (s3cfs_put_file_not_last(file))
		return;
	/*
	 * The daemon closed its socket during the send: ours is the last
	 * reference. Our fput() would release the socket only when this
	 * task returns to user space (task work), for a reader waiting on
	 * its request up to the fetch timeout later, and no new daemon
	 * could register until then. A kworker's fput() releases it now.
	 */
	u = kmalloc(sizeof(*u), GFP_ATOMIC);
	if (!u) {
		fput(file);
		return;
	}
	u->file = file;
	if (llist_add(&u->node, &s3cfs_unpin_list))
		schedule_work(&s3cfs_unpin_work);
}

/**
 * s3cfs_upcall_umount() - tell the daemon a mount is gone
 * @sbi: the mount
 */
void s3cfs_upcall_umount(struct s3cfs_sb_info *sbi)
{
	u32 portid = s3cfs_daemon();

	if (portid)
		s3cfs_nl_send_umount(sbi, portid);
}

/**
 * s3cfs_req_alloc() - allocate a request with one reference (the caller's)
 * @sbi: the mount
 * @cmd: S3CFS_CMD_*
 *
 * Return: the request, or NULL without memory.
 */
struct s3cfs_req *s3cfs_req_alloc(struct s3cfs_sb_info *sbi, u8 cmd)
{
	struct s3cfs_req *req = kzalloc(sizeof(*req), GFP_KERNEL);

	if (!req)
		return NULL;
	refcount_set(&req->ref, 1);
	req->cmd = cmd;
	req->sbi = sbi;
	req->uid = current_fsuid();
	req->reply_upload_delay = -1;
	init_completion(&req->done);
	init_waitqueue_head(&req->wait);
	INIT_LIST_HEAD(&req->inode_link);
	return req;
}

/**
 * s3cfs_req_put() - drop a reference; the last one frees the request
 * @req: the request
 */
void s3cfs_req_put(struct s3cfs_req *req)
{
	if (!refcount_dec_and_test(&req->ref))
		return;
	WARN_ON_ONCE(!list_empty(&req->inode_link));
	if (req->inode)
		iput(req->inode);
	kfree(req->path);
	kfree(req->name);
	kfree(req->etag);
	kfree(req->path2);
	kfree(req->reply_etag);
	kfree(req);
}

static void s3cfs_slot_put(struct s3cfs_req *req)
{
	if (req->user_slots)
		atomic_dec(&req->user_slots->n);
	req->user_slots = NULL;
	atomic_dec(&req->sbi->nr_pending);
	atomic_dec(&s3cfs_nr_pending);
	wake_up_all(&s3cfs_pending_wq);
}

/*
 * @uid's entry in @sbi's user slots: its own, else a free one claimed for
 * it, else NULL (the table is full: not counted).
 */
static struct s3cfs_user_slots *s3cfs_user_slots(struct s3cfs_sb_info *sbi,
						 kuid_t uid)
	__must_hold(&s3cfs_slot_lock)
{
	struct s3cfs_user_slots *free = NULL, *u;
	int i;

	for (i = 0; i < S3CFS_USER_SLOTS; i++) {
		u = &sbi->user_slots[i];
		if (!atomic_read(&u->n)) {
			free = free ?: u;
			continue;
		}
		if (uid_eq(u->uid, uid))
			return u;
	}
	if (free)
		free->uid = uid;
	return free;
}

/*
 * A slot in the pending requests: one of max_pending, one of the mount's
 * max_pending_mount and, for a user other than root, one of the user's
 * max_pending_user in the mount, all or none (under s3cfs_slot_lock, so
 * that no waiter sees a slot taken for an instant and sleeps past a free
 * one). The user's share keeps one user's parallel reads or lookups from
 * holding every slot of a mount other users read from. Slots are given
 * back without the lock, then waiters are woken.
 */
static bool s3cfs_slot_get(struct s3cfs_req *req)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	unsigned int user_max = READ_ONCE(max_pending_user);
	struct s3cfs_user_slots *u = NULL;
	bool ok;

	spin_lock(&s3cfs_slot_lock);
	ok = (unsigned int)atomic_read(&s3cfs_nr_pending) <
		READ_ONCE(max_pending) &&
	     (unsigned int)atomic_read(&sbi->nr_pending) <
		READ_ONCE(max_pending_mount);
	if (ok && user_max && !uid_eq(req->uid, GLOBAL_ROOT_UID)) {
		u = s3cfs_user_slots(sbi, req->uid);
		ok = !u || (unsigned int)atomic_read(&u->n) < user_max;
	}
	if (ok) {
		atomic_inc(&s3cfs_nr_pending);
		atomic_inc(&sbi->nr_pending);
		if (u)
			atomic_inc(&u->n);
		req->user_slots = u;
	}
	spin_unlock(&s3cfs_slot_lock);
	return ok;
}

/* s3cfs_req_submit()'s wait condition: a slot, or the mount is going. */
static bool s3cfs_slot_ready(struct s3cfs_req *req, bool *taken)
{
	if (READ_ONCE(req->sbi->dying))
		return true;
	*taken = s3cfs_slot_get(req);
	return *taken;
}

static void s3cfs_account_latency(struct s3cfs_req *req)
{
	unsigned int ms = jiffies_to_msecs(jiffies - req->sent_at);
	unsigned int b = ms ? min_t(unsigned int, ilog2(ms) + 1,
				    S3CFS_LAT_BUCKETS - 1) : 0;

	atomic64_inc(&req->sbi->stats.latency[b]);
}

/**
 * s3cfs_req_complete() - finish a request exactly once
 * @req: the request, already out of the request table or never in it
 * @status: 0 or a negative errno
 *
 * Wakes every waiter. Later calls are no-ops.
 */
void s3cfs_req_complete(struct s3cfs_req *req, int status)
{
	struct s3cfs_inode_info *si;

	if (test_and_set_bit(S3CFS_REQ_DONE, &req->flags))
		return;
	if (req->cmd == S3CFS_CMD_FETCH) {
		si = S3CFS_I(req->inode);
		s3cfs_account_latency(req);
		if (status)
			atomic64_inc(&req->sbi->stats.fetch_errors);
		else
			atomic64_add(req->length, &req->sbi->stats.fetch_bytes);
		spin_lock(&si->chunk_lock);
		list_del_init(&req->inode_link);
		spin_unlock(&si->chunk_lock);
	}
	req->status = status;
	S3CFS_TRACE(s3cfs_req_done, req, status);
	/* Pairs with the test_bit(S3CFS_REQ_DONE) of waiters that peek. */
	smp_mb__before_atomic();
	complete_all(&req->done);
	wake_up_all(&req->wait);
	if (test_bit(S3CFS_REQ_QUEUED, &req->flags))
		s3cfs_slot_put(req);
}

/*
 * Send @req to the daemon unless it is sent already. SENT is claimed before
 * the unicast, so that a daemon death during the unicast (which clears
 * SENT on every pending request) cannot be overwritten by the sender:
 *
 *   CPU0 (s3cfs_req_send)             CPU1 (daemon socket released)
 *   test_and_set_bit(SENT)
 *   genlmsg_unicast() -> 0
 *                                     s3cfs_upcall_daemon_gone()
 *                                       clear_bit(SENT)
 *   (nothing more to do)              next REGISTER resends it
 *
 * Setting SENT after the unicast (as before) lost the request: CPU1's
 * clear_bit came first, and CPU0 then marked as sent a request that no
 * living daemon had. A unicast that fails clears SENT again and retries
 * shortly; at worst a request reaches one daemon twice (its second answer
 * finds no request: -ENOENT), never zero times.
 */
static void s3cfs_req_send(struct s3cfs_req *req)
{
	u32 portid = s3cfs_daemon();
	int err;

	if (!portid || test_bit(S3CFS_REQ_DONE, &req->flags) ||
	    test_and_set_bit(S3CFS_REQ_SENT, &req->flags))
		return;
	s3cfs_fault("send_port");
	err = s3cfs_nl_send(req, portid);
	s3cfs_fault("send");
	if (!err) {
		S3CFS_TRACE(s3cfs_req_send, req, 0);
		return;
	}
	clear_bit(S3CFS_REQ_SENT, &req->flags);
	/* Not the socket's state: a message built too small (a bug). */
	if (err == -EMSGSIZE)
		pr_err_ratelimited("request %u (command %u) does not fit its message\n",
				   req->id, req->cmd);
	pr_debug("send req %u to port %u: %d\n", req->id, portid, err);
	/* Socket full or gone: try again shortly (or after REGISTER). */
	schedule_delayed_work(&s3cfs_resend_work, msecs_to_jiffies(10));
}

/**
 * s3cfs_req_submit() - queue a request and send it to the daemon
 * @req: the request; the table takes its own reference
 * @nowait: fail at once when no slot is free (prefetch) instead of waiting
 *
 * A request needs a slot: at most max_pending requests are queued over
 * all mounts, at most max_pending_mount per mount, so that one mount
 * (one user's readahead(2) of big files, or a mount whose requests the
 * daemon does not answer) cannot keep another mount's readers out, and at
 * most max_pending_user per user in a mount, so that one user cannot keep
 * the others out of it. Waits (killable) at most the mount's fetch timeout
 * for one. The request then
 * has a deadline: the fetch timeout, counted again from each progress
 * report; a request that nobody waits for is failed with -ETIMEDOUT once
 * it passes (s3cfs_expire_workfn()), a waited-for one ends when its last
 * waiter gives up.
 *
 * Return: 0 when queued (sent or waiting for a daemon), -EAGAIN (@nowait,
 * no slot), -EIO (no slot in time, or the mount is being unmounted),
 * -EINTR, -ENOMEM, -EBUSY.
 */
int s3cfs_req_submit(struct s3cfs_req *req, bool nowait)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	unsigned long timeout =
		msecs_to_jiffies(READ_ONCE(sbi->opts.fetch_timeout_ms));
	bool taken = false;
	long left;
	int err;

	if (!s3cfs_slot_get(req)) {
		if (nowait)
			return -EAGAIN;
		left = wait_event_killable_timeout(s3cfs_pending_wq,
						   s3cfs_slot_ready(req, &taken),
						   timeout);
		if (!taken) {
			if (left < 0)
				return -EINTR;
			if (!READ_ONCE(sbi->dying))
				pr_warn_ratelimited("mount %u: no free request slot in %u ms for uid %u (max_pending %u, max_pending_mount %u, max_pending_user %u)\n",
						    sbi->mount_id,
						    jiffies_to_msecs(timeout),
						    from_kuid(&init_user_ns, req->uid),
						    READ_ONCE(max_pending),
						    READ_ONCE(max_pending_mount),
						    READ_ONCE(max_pending_user));
			return -EIO;
		}
	}
	set_bit(S3CFS_REQ_QUEUED, &req->flags);
	refcount_inc(&req->ref);
	req->sent_at = jiffies;
	req->timeout = timeout;
	req->deadline = jiffies + timeout;
	/*
	 * The id is stored in @req before the entry becomes visible (both
	 * under the table lock), and a mount being unmounted takes no new
	 * request: s3cfs_upcall_flush() sets @dying under the same lock, so
	 * either it finds this request in the table or we find @dying here.
	 */
	xa_lock(&s3cfs_reqs);
	err = __xa_alloc_cyclic(&s3cfs_reqs, &req->id, req, xa_limit_32b,
				&s3cfs_next_id, GFP_KERNEL);
	if (err >= 0 && READ_ONCE(sbi->dying)) {
		__xa_erase(&s3cfs_reqs, req->id);
		err = -EIO;
	} else if (err >= 0) {
		/* Under the lock: flush cancels it after setting @dying. */
		schedule_delayed_work(&sbi->expire_work, S3CFS_EXPIRE_PERIOD);
	}
	xa_unlock(&s3cfs_reqs);
	if (err < 0) {
		refcount_dec(&req->ref);
		clear_bit(S3CFS_REQ_QUEUED, &req->flags);
		s3cfs_slot_put(req);
		return err;
	}
	S3CFS_TRACE(s3cfs_req_queue, req, 0);
	s3cfs_req_send(req);
	return 0;
}

/* Take @req out of the table if it is still there; drops the table ref. */
static void s3cfs_req_unqueue(struct s3cfs_req *req)
{
	if (xa_cmpxchg(&s3cfs_reqs, req->id, req, NULL, 0) == req)
		s3cfs_req_put(req);
}

/*
 * @req was given up: a daemon working on a LIST for it may stop (a
 * listing of a huge directory, interrupted, would otherwise run to its
 * end and compete with the next walk). Lookups and fetches are short and
 * their results are worth keeping: they run on.
 */
static void s3cfs_req_cancel_sent(struct s3cfs_req *req)
{
	u32 portid;

	/* A LIST's pages, an UPLOAD's reads of a file that may change now. */
	if ((req->cmd != S3CFS_CMD_LIST && req->cmd != S3CFS_CMD_UPLOAD) ||
	    !test_bit(S3CFS_REQ_SENT, &req->flags))
		return;
	portid = s3cfs_daemon();
	if (portid) {
		S3CFS_TRACE(s3cfs_req_cancel, req, 0);
		s3cfs_nl_send_cancel(req, portid);
	}
}

/* Nobody waits for @req any more: fail it, and stop the daemon's work. */
static void s3cfs_req_given_up(struct s3cfs_req *req)
{
	s3cfs_req_unqueue(req);
	s3cfs_req_complete(req, -ECANCELED);
	s3cfs_req_cancel_sent(req);
}

static bool s3cfs_req_ready(struct s3cfs_req *req,
			    bool (*ready)(struct s3cfs_req *req, void *arg),
			    void *arg)
{
	return test_bit(S3CFS_REQ_DONE, &req->flags) || (ready && ready(req, arg));
}

/**
 * s3cfs_req_wait() - wait for the answer to a request
 * @req: the request; the caller counted itself in @req->waiters
 * @deadline: jiffies after which to give up
 * @timeout: jiffies a progress report (-EINPROGRESS) from the daemon
 *	extends the wait by, counted from the report
 * @ready: if not NULL, also stop waiting (with 0) as soon as it returns
 *	true: the part of a FETCH this waiter needs has landed
 * @arg: passed to @ready
 *
 * The last waiter to give up cancels the request, so a daemon that never
 * answers leaves nothing behind. A waiter that finds the request cancelled
 * under it by another waiter gets -ECANCELED and should try again.
 *
 * Return: the request's status, 0 if @ready, -ETIMEDOUT, -EINTR or
 * -ECANCELED.
 */
int s3cfs_req_wait(struct s3cfs_req *req, unsigned long deadline,
		   unsigned long timeout,
		   bool (*ready)(struct s3cfs_req *req, void *arg), void *arg)
{
	unsigned long progress;
	long left, ret;
	int status;

	for (;;) {
		left = (long)(deadline - jiffies);
		ret = 0;
		if (left > 0)
			ret = wait_event_killable_timeout(req->wait,
							  s3cfs_req_ready(req, ready, arg),
							  left);
		if (test_bit(S3CFS_REQ_DONE, &req->flags)) {
			atomic_dec(&req->waiters);
			wait_for_completion(&req->done);
			return req->status;
		}
		if (ret > 0 || (ready && ready(req, arg))) {
			/* Ours has landed; the request goes on for the rest. */
			atomic_dec(&req->waiters);
			return 0;
		}
		if (ret < 0)
			break;
		/* The daemon said it is still working on it: wait on. */
		progress = READ_ONCE(req->progress_at);
		if (!progress || !time_after(progress + timeout, jiffies))
			break;
		deadline = progress + timeout;
	}
	status = ret < 0 ? -EINTR : -ETIMEDOUT;
	S3CFS_TRACE(s3cfs_req_timeout, req, status);
	if (status == -ETIMEDOUT && req->cmd == S3CFS_CMD_FETCH)
		atomic64_inc(&req->sbi->stats.fetch_timeouts);
	if (atomic_dec_and_test(&req->waiters))
		s3cfs_req_given_up(req);
	return status;
}

/**
 * s3cfs_req_abandon() - its one waiter will wait for @req no more
 * @req: a request the caller submitted and waits for alone (a readdir's
 *	streamed LIST), not being waited for now
 *
 * Unanswered, it is cancelled as if its last waiter had given up.
 */
void s3cfs_req_abandon(struct s3cfs_req *req)
{
	if (!test_bit(S3CFS_REQ_DONE, &req->flags) &&
	    !atomic_read(&req->waiters))
		s3cfs_req_given_up(req);
}

/**
 * s3cfs_upcall() - send a LOOKUP, LIST or MOUNT request and wait for it
 * @sbi: the mount
 * @cmd: S3CFS_CMD_LOOKUP, S3CFS_CMD_LIST or S3CFS_CMD_MOUNT
 * @path: PATH attribute or NULL
 * @name: NAME attribute or NULL
 * @flags: FLAGS attribute (LOOKUP: S3CFS_LOOKUP_*), or 0
 *
 * Waits at most the mount's fetch timeout.
 *
 * Return: the daemon's status, or -ENOMEM, -EINTR, -EIO (timeout).
 */
int s3cfs_upcall(struct s3cfs_sb_info *sbi, u8 cmd, const char *path,
		 const char *name, u32 flags)
{
	struct s3cfs_req *req;
	int err;

	req = s3cfs_req_alloc(sbi, cmd);
	if (!req)
		return -ENOMEM;
	req->up_flags = flags;
	err = -ENOMEM;
	if (path) {
		req->path = kstrdup(path, GFP_KERNEL);
		if (!req->path)
			goto out;
	}
	if (name) {
		req->name = kstrdup(name, GFP_KERNEL);
		if (!req->name)
			goto out;
	}
	err = s3cfs_upcall_req(req);
out:
	s3cfs_req_put(req);
	return err;
}

/**
 * s3cfs_upcall_req() - send a request and wait for the daemon's answer
 * @req: a request from s3cfs_req_alloc() with its attributes filled in;
 *	the caller keeps its reference (the answer's fields are read there)
 *
 * Waits (killably) at most the mount's fetch timeout, extended by progress.
 *
 * Return: the daemon's answer, or -EIO (no answer in time), -EINTR.
 */
int s3cfs_upcall_req(struct s3cfs_req *req)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	unsigned long timeout =
		msecs_to_jiffies(READ_ONCE(sbi->opts.fetch_timeout_ms));
	int err;

	atomic_set(&req->waiters, 1);
	err = s3cfs_req_submit(req, false);
	if (err)
		return err;
	err = s3cfs_req_wait(req, jiffies + timeout, timeout, NULL, NULL);
	if (err == -ETIMEDOUT || err == -ECANCELED)
		err = -EIO;
	return err;
}

/*
 * DONE is a FETCH's progress (at most its length), or a LIST's log, with
 * INO, in a progress report or a successful answer.
 */
static bool s3cfs_reply_done_valid(const struct s3cfs_req *req,
				   const struct s3cfs_reply *r)
{
	if (r->cmd == S3CFS_CMD_FETCH)
		return r->status == -EINPROGRESS && r->done <= req->length;
	return r->cmd == S3CFS_CMD_LIST && r->has_ino &&
	       (r->status == -EINPROGRESS || !r->status);
}

/* A LIST's log: @r->done bytes of the log @r->ino (@whole: all of it). */
static void s3cfs_req_set_log(struct s3cfs_req *req,
			      const struct s3cfs_reply *r, bool whole)
{
	spin_lock(&req->wait.lock);
	req->list_ino = r->ino;
	req->list_done = r->done;
	req->list_whole = whole;
	spin_unlock(&req->wait.lock);
}

/**
 * s3cfs_upcall_reply() - the daemon answered a request
 * @r: the answer. A STATUS of -EINPROGRESS is a progress report that keeps
 *	the request pending and its waiters waiting; OFFSET and LENGTH are
 *	those of a FETCH, and DONE (progress reports of a FETCH only) says
 *	the first DONE bytes of its range are in the cache.
 *
 * Return: 0, -ENOENT if no such request is pending, -EINVAL if the answer
 * does not match the request (the request is left alone).
 */
int s3cfs_upcall_reply(const struct s3cfs_reply *r)
{
	struct s3cfs_req *req;
	int status = r->status;
	bool answers_etag;

	if (status > 0 || status < -MAX_ERRNO)
		return -EINVAL;
	if (r->id > U32_MAX)
		return -ENOENT;
	xa_lock(&s3cfs_reqs);
	req = xa_load(&s3cfs_reqs, r->id);
	if (!req) {
		xa_unlock(&s3cfs_reqs);
		return -ENOENT;
	}
	if (req->cmd != r->cmd || req->sbi->mount_id != r->mount_id ||
	    (r->cmd == S3CFS_CMD_FETCH &&
	     (!r->has_offset || !r->has_length || r->offset != req->offset ||
	      r->length != req->length)) ||
	    (r->has_done && !s3cfs_reply_done_valid(req, r))) {
		xa_unlock(&s3cfs_reqs);
		return -EINVAL;
	}
	if (status == -EINPROGRESS) {
		/* Progress report: the waiters' clocks restart now. */
		WRITE_ONCE(req->progress_at, jiffies ? : 1);
		if (r->cmd == S3CFS_CMD_LIST && r->has_done) {
			/* The log grew: its readers read on (dir.c). */
			s3cfs_req_set_log(req, r, false);
			wake_up_all(&req->wait);
			xa_unlock(&s3cfs_reqs);
			return 0;
		}
		if (!r->has_done || !r->done) {
			xa_unlock(&s3cfs_reqs);
			return 0;
		}
		/* Chunks landed: let their readers go before the rest. */
		refcount_inc(&req->ref);
		xa_unlock(&s3cfs_reqs);
		s3cfs_chunks_landed(req, r->done);
		s3cfs_req_put(req);
		return 0;
	}
	/*
	 * An ETag comes with (and only with) a successful UPLOAD (not a
	 * stream's parts), RENAME, SETMETA.
	 */
	answers_etag = (r->cmd == S3CFS_CMD_UPLOAD &&
			!(req->up_flags & S3CFS_UP_PART)) ||
		       r->cmd == S3CFS_CMD_RENAME || r->cmd == S3CFS_CMD_SETMETA;
	if ((!status && answers_etag ? !r->etag : !!r->etag) ||
	    ((r->has_flags || r->has_upload_delay) &&
	     (r->cmd != S3CFS_CMD_MOUNT || status))) {
		xa_unlock(&s3cfs_reqs);
		return -EINVAL;
	}
	__xa_erase(&s3cfs_reqs, r->id);
	xa_unlock(&s3cfs_reqs);

	/* The table's reference is ours now. */
	/* A streamed listing's answer: its log is whole, this long. */
	if (r->cmd == S3CFS_CMD_LIST && r->has_done)
		s3cfs_req_set_log(req, r, true);
	if (r->cmd == S3CFS_CMD_FETCH && !status)
		status = s3cfs_chunks_fetched(req);
	if (r->has_flags)
		req->reply_flags = r->flags;
	if (r->has_upload_delay)
		req->reply_upload_delay = r->upload_delay;
	if (r->etag) {
		req->reply_etag = kstrdup(r->etag, GFP_KERNEL);
		if (!req->reply_etag)
			status = -ENOMEM;
	}
	s3cfs_req_complete(req, status);
	s3cfs_req_put(req);
	return 0;
}

/*
 * Hold a reference on every request in the table that matches @want, in a
 * batch, so they can be sent or completed without the table lock.
 */
#define S3CFS_BATCH 32
static unsigned int s3cfs_reqs_grab(unsigned long *start,
				    struct s3cfs_req **batch,
				    bool (*want)(struct s3cfs_req *, void *),
				    void *arg)
{
	XA_STATE(xas, &s3cfs_reqs, *start);
	struct s3cfs_req *req;
	unsigned int n = 0;

	xas_lock(&xas);
	xas_for_each(&xas, req, ULONG_MAX) {
		/* Slots being allocated read as XA_ZERO_ENTRY here. */
		if (xas_retry(&xas, req) || !want(req, arg))
			continue;
		refcount_inc(&req->ref);
		batch[n++] = req;
		if (n == S3CFS_BATCH) {
			*start = xas.xa_index + 1;
			break;
		}
	}
	xas_unlock(&xas);
	if (n < S3CFS_BATCH)
		*start = ULONG_MAX;
	return n;
}

static bool s3cfs_want_unsent(struct s3cfs_req *req, void *arg)
{
	return !test_bit(S3CFS_REQ_SENT, &req->flags);
}

static void s3cfs_resend_workfn(struct work_struct *work)
{
	struct s3cfs_req *batch[S3CFS_BATCH];
	unsigned long start = 0;
	unsigned int i, n;

	while (start != ULONG_MAX && s3cfs_daemon_present()) {
		n = s3cfs_reqs_grab(&start, batch, s3cfs_want_unsent, NULL);
		for (i = 0; i < n; i++) {
			s3cfs_req_send(batch[i]);
			s3cfs_req_put(batch[i]);
		}
		cond_resched();
	}
}

static int s3cfs_mount_announce(struct s3cfs_sb_info *sbi, void *arg)
{
	int err = s3cfs_nl_send_mount(sbi, 0, *(u32 *)arg);

	if (err)
		pr_warn("cannot announce mount %u to the daemon: %d\n",
			sbi->mount_id, err);
	return err;
}

/**
 * s3cfs_upcall_register() - a daemon registered
 * @sk: its socket (NETLINK_CB(skb).sk of the REGISTER)
 * @portid: its netlink port id
 * @version: the protocol version it speaks
 *
 * Tells it about every live mount before anything else can be sent to it,
 * then re-sends every pending request. Called in the daemon's sendmsg,
 * so its socket cannot be released meanwhile.
 *
 * Return: 0, or -EBUSY if another daemon is registered.
 */
int s3cfs_upcall_register(struct sock *sk, u32 portid, u32 version)
{
	struct sock *old = NULL;
	int err;

	/* Mount list locked: no mount can be added before the port is set. */
	s3cfs_mounts_lock();
	err = -EBUSY;
	spin_lock(&s3cfs_daemon_lock);
	if (s3cfs_daemon_sk) {
		spin_unlock(&s3cfs_daemon_lock);
		goto out_unlock;
	}
	/* Known, for s3cfs_daemon_pin(), but not ready for requests yet. */
	sock_hold(sk);
	s3cfs_daemon_sk = sk;
	s3cfs_daemon_portid = portid;
	s3cfs_daemon_ver = version;
	spin_unlock(&s3cfs_daemon_lock);
	err = s3cfs_for_each_mount(s3cfs_mount_announce, &portid);
	spin_lock(&s3cfs_daemon_lock);
	if (err) {
		old = s3cfs_daemon_sk;
		s3cfs_daemon_sk = NULL;
		s3cfs_daemon_portid = 0;
	} else {
		s3cfs_daemon_ready = true;
	}
	spin_unlock(&s3cfs_daemon_lock);
	s3cfs_mounts_unlock();
	if (old)
		sock_put(old);
	if (err)
		return err;
	pr_info("daemon registered (port %u, protocol %u)\n", portid, version);
	mod_delayed_work(system_wq, &s3cfs_resend_work, 0);
	return 0;

out_unlock:
	s3cfs_mounts_unlock();
	return err;
}

static bool s3cfs_want_any(struct s3cfs_req *req, void *arg)
{
	return true;
}

/**
 * s3cfs_upcall_daemon_gone() - the daemon's socket was released
 * @portid: the port that went away
 *
 * Pending requests stay queued, unsent, for the next daemon.
 */
void s3cfs_upcall_daemon_gone(u32 portid)
{
	struct s3cfs_req *batch[S3CFS_BATCH];
	unsigned long start = 0;
	unsigned int i, n;
	struct sock *sk;

	/*
	 * The daemon's socket is orphaned (SOCK_DEAD) before its release
	 * notifies; a socket that bound the port id since and is released
	 * first is not the daemon's.
	 */
	spin_lock(&s3cfs_daemon_lock);
	sk = s3cfs_daemon_sk;
	if (!sk || s3cfs_daemon_portid != portid || !sock_flag(sk, SOCK_DEAD)) {
		spin_unlock(&s3cfs_daemon_lock);
		return;
	}
	s3cfs_daemon_sk = NULL;
	s3cfs_daemon_portid = 0;
	s3cfs_daemon_ready = false;
	spin_unlock(&s3cfs_daemon_lock);
	sock_put(sk);
	pr_warn("daemon (port %u) went away; requests wait for a new one\n",
		portid);

	while (start != ULONG_MAX) {
		n = s3cfs_reqs_grab(&start, batch, s3cfs_want_any, NULL);
		for (i = 0; i < n; i++) {
			clear_bit(S3CFS_REQ_SENT, &batch[i]->flags);
			s3cfs_req_put(batch[i]);
		}
	}
}

static bool s3cfs_want_mount(struct s3cfs_req *req, void *arg)
{
	return req->sbi == arg;
}

static bool s3cfs_want_expired(struct s3cfs_req *req, void *arg)
{
	unsigned long deadline, progress;

	if (req->sbi != arg || atomic_read(&req->waiters))
		return false;
	deadline = req->deadline;
	progress = READ_ONCE(req->progress_at);
	if (progress && time_after(progress + req->timeout, deadline))
		deadline = progress + req->timeout;
	return time_after_eq(jiffies, deadline);
}

/*
 * Fail the requests of a mount that nobody waits for (prefetch, or whose
 * readers got their part) and that passed their deadline: a daemon that
 * never answers them must not hold slots and inode references for ever.
 */
static void s3cfs_expire_workfn(struct work_struct *work)
{
	struct s3cfs_sb_info *sbi = container_of(to_delayed_work(work),
						 struct s3cfs_sb_info,
						 expire_work);
	struct s3cfs_req *batch[S3CFS_BATCH];
	unsigned long start = 0;
	unsigned int i, n;

	while (start != ULONG_MAX) {
		n = s3cfs_reqs_grab(&start, batch, s3cfs_want_expired, sbi);
		for (i = 0; i < n; i++) {
			S3CFS_TRACE(s3cfs_req_timeout, batch[i], -ETIMEDOUT);
			atomic64_inc(&sbi->stats.expired);
			s3cfs_req_unqueue(batch[i]);
			s3cfs_req_complete(batch[i], -ETIMEDOUT);
			s3cfs_req_cancel_sent(batch[i]);
			s3cfs_req_put(batch[i]);
		}
		cond_resched();
	}
	if (atomic_read(&sbi->nr_pending) && !READ_ONCE(sbi->dying))
		schedule_delayed_work(&sbi->expire_work, S3CFS_EXPIRE_PERIOD);
}

/**
 * s3cfs_upcall_init_mount() - set up a mount's request state
 * @sbi: the mount
 */
void s3cfs_upcall_init_mount(struct s3cfs_sb_info *sbi)
{
	INIT_DELAYED_WORK(&sbi->expire_work, s3cfs_expire_workfn);
}

/**
 * s3cfs_upcall_flush() - fail every request of a mount that is going away
 * @sbi: the mount
 *
 * Called at unmount before the inodes are evicted: requests hold inode
 * references, and their waiters get -EIO. From here on the mount takes no
 * new request (@dying, set under the request table's lock, which
 * s3cfs_req_submit() checks under the same lock).
 */
void s3cfs_upcall_flush(struct s3cfs_sb_info *sbi)
{
	struct s3cfs_req *batch[S3CFS_BATCH];
	unsigned long start = 0;
	unsigned int i, n;

	xa_lock(&s3cfs_reqs);
	WRITE_ONCE(sbi->dying, true);
	xa_unlock(&s3cfs_reqs);
	/* Submitters waiting for a slot see @dying. */
	wake_up_all(&s3cfs_pending_wq);
	while (start != ULONG_MAX) {
		n = s3cfs_reqs_grab(&start, batch, s3cfs_want_mount, sbi);
		for (i = 0; i < n; i++) {
			S3CFS_TRACE(s3cfs_req_flush, batch[i], -EIO);
			s3cfs_req_unqueue(batch[i]);
			s3cfs_req_complete(batch[i], -EIO);
			s3cfs_req_put(batch[i]);
		}
	}
	cancel_delayed_work_sync(&sbi->expire_work);
}

/**
 * s3cfs_upcall_exit() - module unload: no mounts, nothing may be pending
 */
void s3cfs_upcall_exit(void)
{
	struct sock *sk;

	cancel_delayed_work_sync(&s3cfs_resend_work);
	flush_work(&s3cfs_unpin_work);
	/* A daemon still registered: its socket outlives the family. */
	spin_lock(&s3cfs_daemon_lock);
	sk = s3cfs_daemon_sk;
	s3cfs_daemon_sk = NULL;
	s3cfs_daemon_portid = 0;
	s3cfs_daemon_ready = false;
	spin_unlock(&s3cfs_daemon_lock);
	if (sk)
		sock_put(sk);
	WARN_ON(!xa_empty(&s3cfs_reqs));
	xa_destroy(&s3cfs_reqs);
}
