// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who a --metrics client is, for its limit of connections. An address does
 * not tell local users apart: every one of them may connect from 127.0.0.1
 * (or any of 127.0.0.0/8's sixteen million addresses), as the local
 * Prometheus does. So a client on this host (its socket in our network
 * namespace) is its user: the kernel's socket diagnostics (NETLINK_SOCK_DIAG,
 * the lookup of one socket by its four addresses and ports, as ss does) say
 * which uid made the socket at the other end, and no unprivileged user can
 * make one as another. A client elsewhere is its address: IPv4 whole, IPv6
 * by its /64 (a host is given a /64 and chooses within it); an IPv4 address
 * mapped into IPv6 is the IPv4 one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "agent_metrics.h"

/* An IPv4 address mapped into IPv6 (::ffff:a.b.c.d): its 4 bytes, else NULL. */
static const uint8_t *mapped_v4(const struct sockaddr_in6 *s6)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(s6->sin6_addr.s6_addr, prefix, 12) ? NULL : s6->sin6_addr.s6_addr + 12;
}

int agent_client_key_addr(const struct sockaddr *sa, socklen_t len, struct agent_client_key *k)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	const uint8_t *v4;

	memset(k, 0, sizeof(*k));
	if (sa->sa_family == AF_INET && len >= sizeof(*s4)) {
		k->kind = AGENT_CLIENT_IPV4;
		memcpy(k->bytes, &s4->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(*s6)) {
		v4 = mapped_v4(s6);
		k->kind = v4 ? AGENT_CLIENT_IPV4 : AGENT_CLIENT_IPV6;
		memcpy(k->bytes, v4 ? v4 : s6->sin6_addr.s6_addr, v4 ? 4 : 8);
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

bool agent_addr_loopback(const struct sockaddr *sa, socklen_t len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	const uint8_t *v4 = NULL;

	if (!sa)
		return false;
	if (sa->sa_family == AF_INET && len >= sizeof(*s4))
		v4 = (const uint8_t *)&s4->sin_addr;
	else if (sa->sa_family == AF_INET6 && len >= sizeof(*s6))
		v4 = mapped_v4(s6);
	else
		return false;
	if (v4)
		return v4[0] == 127; /* 127.0.0.0/8 */
	return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
}

bool agent_client_key_equal(const struct agent_client_key *a, const struct agent_client_key *b)
{
	return a->kind == b->kind && !memcmp(a->bytes, b->bytes, sizeof(a->bytes));
}

/* One end of a connection as socket diagnostics name it: family, address, port. */
static int diag_end(const struct sockaddr_storage *ss, uint8_t *family, __be32 addr[4],
		    __be16 *port)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
	const uint8_t *v4;

	memset(addr, 0, 16);
	if (ss->ss_family == AF_INET) {
		*family = AF_INET;
		memcpy(addr, &s4->sin_addr, 4);
		*port = s4->sin_port;
	} else if (ss->ss_family == AF_INET6) {
		/* a mapped IPv4 peer's socket is an IPv4 one */
		v4 = mapped_v4(s6);
		*family = v4 ? AF_INET : AF_INET6;
		memcpy(addr, v4 ? v4 : s6->sin6_addr.s6_addr, v4 ? 4 : 16);
		*port = s6->sin6_port;
	} else {
		return -EAFNOSUPPORT;
	}
	return 0;
}

/*
 * The uid that made the socket at the other end of fd, when that socket is
 * in our network namespace: 0, or -ENOENT (a client elsewhere) or -errno.
 * One request and its answer on diag_fd (non-blocking; 100 ms at most).
 */
static int peer_uid(int diag_fd, int fd, uint32_t *uid)
{
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = { .nlh = { .nlmsg_len = sizeof(req),
			   .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			   .nlmsg_flags = NLM_F_REQUEST } };
	union {
		struct nlmsghdr nlh;
		char buf[1024];
	} ans;
	struct pollfd p = { .fd = diag_fd, .events = POLLIN };
	uint8_t lfam, pfam;
	ssize_t n;

	if (getsockname(fd, (struct sockaddr *)&local, &ll) ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl))
		return -errno;
	/* the peer's own socket: its local end is our peer, its remote end us */
	if (diag_end(&peer, &pfam, req.r.id.idiag_src, &req.r.id.idiag_sport) ||
	    diag_end(&local, &lfam, req.r.id.idiag_dst, &req.r.id.idiag_dport) || pfam != lfam)
		return -EAFNOSUPPORT;
	req.r.sdiag_family = pfam;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0U;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	req.nlh.nlmsg_seq = (uint32_t)fd;
	if (send(diag_fd, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req))
		return -errno;
	for (;;) {
		if (poll(&p, 1, 100) != 1)
			return -ETIMEDOUT;
		n = recv(diag_fd, &ans, sizeof(ans), MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		/* an answer to an earlier request that timed out: not this one */
		if ((size_t)n >= sizeof(ans.nlh) && ans.nlh.nlmsg_seq == req.nlh.nlmsg_seq)
			break;
	}
	if ((size_t)n < NLMSG_LENGTH(sizeof(struct inet_diag_msg)) ||
	    ans.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return -ENOENT;
	*uid = ((const struct inet_diag_msg *)NLMSG_DATA(&ans.nlh))->idiag_uid;
	return 0;
}

int agent_client_key(int diag_fd, int fd, struct agent_client_key *k)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	uint32_t uid;

	if (diag_fd >= 0 && !peer_uid(diag_fd, fd, &uid)) {
		memset(k, 0, sizeof(*k));
		k->kind = AGENT_CLIENT_UID;
		memcpy(k->bytes, &uid, sizeof(uid));
		return 0;
	}
	if (getpeername(fd, (struct sockaddr *)&peer, &pl))
		return -errno;
	return agent_client_key_addr((const struct sockaddr *)&peer, pl, k);
}

int agent_client_diag_open(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_SOCK_DIAG);
}
