"""Congestion-control names: the ones our module registers and the kernel's own.

A leaf module (standard library only): the scenario model checks flow names
against it, the image build lists what the kernel under test offers with it.
"""

#: Our module's congestion controls (kernel/, module tcp_sslab).
OUR_CCAS = ("cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss")
#: The kernel's own, as built into or shipped as modules with Debian's 6.1 kernel.
KERNEL_CCAS = ("reno", "cubic", "bbr", "bic", "cdg", "dctcp", "highspeed", "htcp", "hybla",
               "illinois", "lp", "nv", "scalable", "vegas", "veno", "westwood", "yeah")
KNOWN_CCAS = OUR_CCAS + KERNEL_CCAS
