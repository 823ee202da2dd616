/* SPDX-License-Identifier: GPL-2.0 */
/*
 * suss_g2.h: cubic_suss_g2, SUSS with its growth factor held at 2
 * (suss_g2.c).  It has no state or parameters of its own: SUSS's serve it
 * (suss.h), and so does SUSS's version (suss_version).
 */
#ifndef SUSS_G2_H
#define SUSS_G2_H

/* The start's entry in the registry (variants.h says what a line is). */
#define SS_SUSS_G2_REGISTRY						\
	SS_VARIANT(SUSS_G2, 9, ss_suss_g2_ops)				\
	SS_NAME(suss_g2, "cubic_suss_g2", SUSS_G2, SS_VERSION_PARAM)

#endif /* SUSS_G2_H */
