"""Congestion-control names: the ones our module registers and the kernel's own; our module's parameters.

A leaf module (standard library only): the scenario model checks flow names
and module parameters against it, the image build lists what the kernel
under test offers with it.
"""

#: Our module's congestion controls (kernel/, module tcp_sslab).
OUR_CCAS = ("cubic_ss", "cubic_hs", "cubic_hspp", "cubic_suss",
            "reno_fixed", "reno_hoe", "reno_astart", "cubic_std", "cubic_blitz")
#: The four slow starts of the SUSS paper and the HyStart/HyStart++ report.
SLOW_START_CCAS = OUR_CCAS[:4]
#: The kernel's own, as built into or shipped as modules with Debian's 6.1 kernel.
KERNEL_CCAS = ("reno", "cubic", "bbr", "bic", "cdg", "dctcp", "highspeed", "htcp", "hybla",
               "illinois", "lp", "nv", "scalable", "vegas", "veno", "westwood", "yeah")
KNOWN_CCAS = OUR_CCAS + KERNEL_CCAS

#: The module's parameters (kernel/sslab_tcp.c, /sys/module/tcp_sslab/parameters/), all
#: unsigned integers read on every ACK; a unit test checks this list against the C source.
MODULE_PARAMS = ("hs_low_window", "hs_ack_delta_us", "hs_delay_min_us", "hs_delay_max_us", "hs_min_samples",
                 "hspp_min_rtt_thresh_us", "hspp_max_rtt_thresh_us", "hspp_min_rtt_divisor", "hspp_n_rtt_sample",
                 "hspp_css_growth_divisor", "hspp_css_rounds", "hspp_l_unpaced", "suss_max", "suss_k_max",
                 "suss_min_rtt_us", "suss_lift_rwnd_rounds", "reno_init_ssthresh", "reno_iw", "astart_tau_us", "std_iw",
                 "blitz_pace_pct", "blitz_lift_rwnd_rounds")
