/* SPDX-License-Identifier: GPL-2.0 */
/*
 * variants.h: the registry of slow starts: every start's declarations, its
 * variants and the congestion-control names that run them.  Included
 * several times, each time with one of these defined (no include guard, on
 * purpose), and only that section read:
 *
 *   SS_DECLARATIONS
 *	each start's header (its state and its parameters), included once
 *	into sscore.h;
 *
 *   SS_PARAMS(list)
 *	a start's parameter list, SS_<START>_PARAMS of its header, each entry
 *	P(name, default, kind, description): the fields of struct ss_params,
 *	their defaults, the module's parameters (sslab_tcp.c) and the names
 *	the harness accepts (runners/sslab/ccas.py reads these lines and the
 *	headers), in this order;
 *
 *   SS_STATE(member, type)
 *	a start's per-connection state, struct @type, as member @member of
 *	struct sscore_state's union;
 *
 *   SS_VARIANT(id, ops)
 *	one slow-start variant: the constant SS_<id> of enum ss_variant and
 *	its ops table (struct ss_start_ops, core/ssvariant.h), defined in the
 *	variant's own file;
 *
 *   SS_EXITS(list), SS_EVENTS(list)
 *	a start's exit causes and trace events, SS_<START>_EXITS and
 *	SS_<START>_EVENTS of its header (sscore.h says what a line is): the
 *	constants of enum ss_exit_cause and enum ss_event_type and the names
 *	the trace prints;
 *
 *   SS_VERSIONS(id, list)
 *	a start's versions, SS_<START>_VERSIONS of its header (sscore.h
 *	says what a line is), for variant SS_<id>: the harness reads them
 *	(the pins a name may carry, what a run record calls each version);
 *	the start's header makes the constants from the same lines;
 *
 *   SS_NAME(ident, cc_name, id, version)
 *	one name the module registers with the kernel (what a socket selects
 *	by TCP_CONGESTION): it runs variant SS_<id>; @version pins the
 *	variant's version, a constant of its start's SS_VERSIONS list, or is
 *	SS_VERSION_PARAM (its start's parameter's, suss_version or
 *	search_version, read when a connection starts).
 *
 * A new start is its code (core/<start>.c: the model and the ops), its
 * header (core/<start>.h: its state and its parameters with their defaults
 * and reasons), its tests, and here a line in each section it has.  The
 * order of SS_NAME lines is the order of registration.
 */

#ifdef SS_DECLARATIONS
#include "hystart.h"
#include "hystartpp.h"
#include "suss.h"
#include "ratestart.h"
#include "rapidstart.h"
#include "search.h"
#endif

#ifdef SS_PARAMS
SS_PARAMS(SS_HYSTART_PARAMS)
SS_PARAMS(SS_HYSTARTPP_PARAMS)
SS_PARAMS(SS_SUSS_PARAMS)
SS_PARAMS(SS_RATESTART_PARAMS)
SS_PARAMS(SS_RAPID_PARAMS)
SS_PARAMS(SS_SEARCH_PARAMS)
#endif

#ifdef SS_EXITS
SS_EXITS(SS_HYSTART_EXITS)
SS_EXITS(SS_HYSTARTPP_EXITS)
SS_EXITS(SS_SUSS_EXITS)
SS_EXITS(SS_RATESTART_EXITS)
SS_EXITS(SS_SEARCH_EXITS)
#endif

#ifdef SS_EVENTS
SS_EVENTS(SS_HYSTARTPP_EVENTS)
SS_EVENTS(SS_SUSS_EVENTS)
SS_EVENTS(SS_SEARCH_EVENTS)
#endif

#ifdef SS_VERSIONS
SS_VERSIONS(SUSS, SS_SUSS_VERSIONS)
SS_VERSIONS(SEARCH, SS_SEARCH_VERSIONS)
#endif

#ifdef SS_STATE
SS_STATE(hspp, ss_hspp)
SS_STATE(suss, ss_suss)
SS_STATE(ere, ss_ere)
SS_STATE(hoe, ss_hoe)
SS_STATE(blitz, ss_blitz)
SS_STATE(rapid, ss_rapid)
SS_STATE(search, ss_search)
#endif

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
SS_VARIANT(SEARCH, ss_search_ops)
#endif

#ifdef SS_NAME
SS_NAME(ss, "cubic_ss", TRADITIONAL, SS_VERSION_PARAM)
SS_NAME(hs, "cubic_hs", HYSTART, SS_VERSION_PARAM)
SS_NAME(hspp, "cubic_hspp", HYSTARTPP, SS_VERSION_PARAM)
SS_NAME(suss, "cubic_suss", SUSS, SS_VERSION_PARAM)
SS_NAME(suss24, "cubic_suss24", SUSS, SUSS_VER_2024)
SS_NAME(suss25, "cubic_suss25", SUSS, SUSS_VER_2025)
SS_NAME(susspaper, "cubic_susspaper", SUSS, SUSS_VER_PAPER)
SS_NAME(reno_fixed, "reno_fixed", RENO_FIXED, SS_VERSION_PARAM)
SS_NAME(reno_hoe, "reno_hoe", RENO_HOE, SS_VERSION_PARAM)
SS_NAME(reno_astart, "reno_astart", RENO_ASTART, SS_VERSION_PARAM)
SS_NAME(std, "cubic_std", STD_START, SS_VERSION_PARAM)
SS_NAME(blitz, "cubic_blitz", BLITZ, SS_VERSION_PARAM)
SS_NAME(suss_g2, "cubic_suss_g2", SUSS_G2, SS_VERSION_PARAM)
SS_NAME(rapid, "cubic_rapid", RAPID, SS_VERSION_PARAM)
SS_NAME(search, "cubic_search", SEARCH, SS_VERSION_PARAM)
SS_NAME(search3, "cubic_search3", SEARCH, SEARCH_VER_3)
SS_NAME(search4, "cubic_search4", SEARCH, SEARCH_VER_4)
#endif
