/* SPDX-License-Identifier: GPL-2.0 */
/*
 * variants.h: the registry of slow starts, read from the starts' own
 * headers.  A start's header (core/<start>.h) declares its entry as one
 * macro, SS_<START>_REGISTRY, a line per thing it has of these:
 *
 *   SS_PARAMS(list)
 *	its parameter list, SS_<START>_PARAMS, each entry P(name, default,
 *	kind, description): the fields of struct ss_params, their defaults,
 *	the module's parameters (sslab_tcp.c) and the names the harness
 *	accepts (runners/sslab/ccas.py reads these lines and the headers);
 *
 *   SS_STATE(member, type)
 *	its per-connection state, struct @type, as member @member of struct
 *	sscore_state's union;
 *
 *   SS_VARIANT(id, number, ops)
 *	one slow-start variant: the constant SS_<id> = @number of enum
 *	ss_variant and its ops table (struct ss_start_ops, core/ssvariant.h),
 *	defined in the variant's own file.  Every trace line carries the
 *	number, so a variant keeps it for good and a new one takes one no
 *	other has (the compiler refuses two alike: ss_variant_numbers_unique,
 *	sscore.c);
 *
 *   SS_EXITS(list), SS_EVENTS(list)
 *	its exit causes and trace events, SS_<START>_EXITS and
 *	SS_<START>_EVENTS (sscore.h says what a line is): the constants of
 *	enum ss_exit_cause and enum ss_event_type and the names the trace
 *	prints;
 *
 *   SS_VERSIONS(id, list)
 *	its versions, SS_<START>_VERSIONS (sscore.h says what a line is),
 *	for variant SS_<id>: the harness reads them (the pins a name may
 *	carry, what a run record calls each version); the header makes the
 *	constants from the same lines;
 *
 *   SS_NAME(ident, cc_name, id, version)
 *	one name the module registers with the kernel (what a socket selects
 *	by TCP_CONGESTION): it runs variant SS_<id>; @version pins the
 *	variant's version, a constant of its start's SS_VERSIONS list, or is
 *	SS_VERSION_PARAM (its start's parameter's, suss_version or
 *	search_version, read when a connection starts).
 *
 * Which headers declare a start is found when the module or the tests are
 * built: kernel/starts.sh lists every header of core/ that defines an
 * SS_<START>_REGISTRY, in the order of its first variant's number, into
 * build/starts.h (its #include lines, and SS_STARTS, the entries in that
 * order); the harness reads the headers by the same rule.  So a new start
 * is its code (core/<start>.c: the model and the ops), its header
 * (core/<start>.h: its state, its parameters with their defaults and
 * reasons, its entry) and its tests, and nothing here.
 *
 * Included several times, each time with one section's macro defined (no
 * include guard, on purpose): SS_DECLARATIONS includes every start's
 * header once, into sscore.h; any other expands every start's lines of
 * that section, in the registry's order, and nothing of the others.  The
 * order of SS_NAME lines is the order of registration.
 */

#ifdef SS_DECLARATIONS
#include "../build/starts.h"
#else

#ifndef SS_PARAMS
#define SS_PARAMS(list)
#define SS_PARAMS_UNASKED
#endif
#ifndef SS_STATE
#define SS_STATE(member, type)
#define SS_STATE_UNASKED
#endif
#ifndef SS_VARIANT
#define SS_VARIANT(id, number, ops)
#define SS_VARIANT_UNASKED
#endif
#ifndef SS_EXITS
#define SS_EXITS(list)
#define SS_EXITS_UNASKED
#endif
#ifndef SS_EVENTS
#define SS_EVENTS(list)
#define SS_EVENTS_UNASKED
#endif
#ifndef SS_VERSIONS
#define SS_VERSIONS(id, list)
#define SS_VERSIONS_UNASKED
#endif
#ifndef SS_NAME
#define SS_NAME(ident, cc_name, id, version)
#define SS_NAME_UNASKED
#endif

SS_STARTS

#ifdef SS_PARAMS_UNASKED
#undef SS_PARAMS
#undef SS_PARAMS_UNASKED
#endif
#ifdef SS_STATE_UNASKED
#undef SS_STATE
#undef SS_STATE_UNASKED
#endif
#ifdef SS_VARIANT_UNASKED
#undef SS_VARIANT
#undef SS_VARIANT_UNASKED
#endif
#ifdef SS_EXITS_UNASKED
#undef SS_EXITS
#undef SS_EXITS_UNASKED
#endif
#ifdef SS_EVENTS_UNASKED
#undef SS_EVENTS
#undef SS_EVENTS_UNASKED
#endif
#ifdef SS_VERSIONS_UNASKED
#undef SS_VERSIONS
#undef SS_VERSIONS_UNASKED
#endif
#ifdef SS_NAME_UNASKED
#undef SS_NAME
#undef SS_NAME_UNASKED
#endif

#endif /* SS_DECLARATIONS */
