/* The kernel's CFS weights, and the nice that gives a MuQSS share. */
#ifndef MUQSS_CORE_CFS_WEIGHT_H
#define MUQSS_CORE_CFS_WEIGHT_H

/* The kernel nice whose CFS weight gives a CPU-bound task of MuQSS nice
 * @nice the share MuQSS would give it. */
int cfs_weight_nice(int nice);

#endif
