// SPDX-License-Identifier: GPL-2.0
/*
 * reno_iw20: NewReno that starts with 20 segments instead of 10.
 *
 * An example of a researcher's out-of-tree module for slowstart-lab
 * (README, "Test your own algorithm"): a second name for an algorithm the
 * kernel has, with one parameter changed.  Growth, loss response and undo
 * are the kernel's NewReno, whose three steps net/ipv4/tcp_cong.c exports
 * (tcp_reno_cong_avoid, tcp_reno_ssthresh, tcp_reno_undo_cwnd); only the
 * window a connection starts with is ours.
 *
 * When a connection is established the kernel first sets cwnd to the
 * route's initial window (10 segments, RFC 6928) and then calls the
 * congestion control's .init, so .init can replace that window.
 */
#include <linux/module.h>
#include <net/tcp.h>

/* Segments; 20 doubles Linux's default, the kind of change a start-up study varies. */
static unsigned int iw __read_mostly = 20;
module_param(iw, uint, 0644);
MODULE_PARM_DESC(iw, "initial congestion window in segments (default 20)");

static void reno_iw_init(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	/* Never above the window clamp; never below one segment. */
	tcp_snd_cwnd_set(tp, clamp_t(u32, iw, 1, tp->snd_cwnd_clamp));
}

static struct tcp_congestion_ops reno_iw20 __read_mostly = {
	.init		= reno_iw_init,
	.ssthresh	= tcp_reno_ssthresh,
	.cong_avoid	= tcp_reno_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.owner		= THIS_MODULE,
	.name		= "reno_iw20",
};

static int __init reno_iw20_register(void)
{
	return tcp_register_congestion_control(&reno_iw20);
}

static void __exit reno_iw20_unregister(void)
{
	tcp_unregister_congestion_control(&reno_iw20);
}

module_init(reno_iw20_register);
module_exit(reno_iw20_unregister);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("NewReno with an initial window of 20 segments (slowstart-lab example)");
