/* SPDX-License-Identifier: GPL-2.0 */
/*
 * variants.h: the registry of slow-start variants and of the congestion-
 * control names that run them.  Included several times with different
 * definitions of the two macros (no include guard, on purpose):
 *
 *   SS_VARIANT(id, ops)
 *	one slow-start variant: the constant SS_<id> of enum ss_variant and
 *	its ops table (struct ss_start_ops, core/ssvariant.h), defined in the
 *	variant's own file;
 *
 *   SS_NAME(ident, cc_name, id, suss_version)
 *	one name the module registers with the kernel (what a socket selects
 *	by TCP_CONGESTION): it runs variant SS_<id>; @suss_version pins the
 *	SUSS version (enum ss_suss_version) or is SS_SUSS_VERSION_PARAM (the
 *	module parameter suss_version's, read when a connection starts).
 *
 * A new variant is a file in core/ with its ops table and, here, one
 * SS_VARIANT line and one SS_NAME line (runners/sslab/ccas.py reads the
 * names from this file too).  The order of SS_NAME lines is the order of
 * registration.
 */

#ifdef SS_VARIANT
SS_VARIANT(TRADITIONAL, ss_traditional_ops)
SS_VARIANT(HYSTART, ss_hystart_ops)
SS_VARIANT(HYSTARTPP, ss_hystartpp_ops)
SS_VARIANT(SUSS, ss_suss_ops)
SS_VARIANT(RENO_FIXED, ss_reno_fixed_ops)
SS_VARIANT(RENO_HOE, ss_reno_hoe_ops)
SS_VARIANT(RENO_ASTART, ss_reno_astart_ops)
SS_VARIANT(STD_START, ss_std_start_ops)
SS_VARIANT(BLITZ, ss_blitz_ops)
SS_VARIANT(SUSS_G2, ss_suss_g2_ops)
SS_VARIANT(RAPID, ss_rapid_ops)
#endif

#ifdef SS_NAME
SS_NAME(ss, "cubic_ss", TRADITIONAL, SS_SUSS_VERSION_PARAM)
SS_NAME(hs, "cubic_hs", HYSTART, SS_SUSS_VERSION_PARAM)
SS_NAME(hspp, "cubic_hspp", HYSTARTPP, SS_SUSS_VERSION_PARAM)
SS_NAME(suss, "cubic_suss", SUSS, SS_SUSS_VERSION_PARAM)
SS_NAME(suss24, "cubic_suss24", SUSS, SUSS_VER_2024)
SS_NAME(suss25, "cubic_suss25", SUSS, SUSS_VER_2025)
SS_NAME(susspaper, "cubic_susspaper", SUSS, SUSS_VER_PAPER)
SS_NAME(reno_fixed, "reno_fixed", RENO_FIXED, SS_SUSS_VERSION_PARAM)
SS_NAME(reno_hoe, "reno_hoe", RENO_HOE, SS_SUSS_VERSION_PARAM)
SS_NAME(reno_astart, "reno_astart", RENO_ASTART, SS_SUSS_VERSION_PARAM)
SS_NAME(std, "cubic_std", STD_START, SS_SUSS_VERSION_PARAM)
SS_NAME(blitz, "cubic_blitz", BLITZ, SS_SUSS_VERSION_PARAM)
SS_NAME(suss_g2, "cubic_suss_g2", SUSS_G2, SS_SUSS_VERSION_PARAM)
SS_NAME(rapid, "cubic_rapid", RAPID, SS_SUSS_VERSION_PARAM)
#endif
