/* SPDX-License-Identifier: GPL-2.0 */
/* bbr3 and bbr2_sslab in tcp_sslab (sslab_bbr3.c): registered when the kernel has our hooks. */
#ifndef SSLAB_BBR3_H
#define SSLAB_BBR3_H

int sslab_bbr3_register(void);
void sslab_bbr3_unregister(void);

#endif
