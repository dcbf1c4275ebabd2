// Package stats is the exact statistics of a crash-rate experiment: binomial confidence
// intervals (Clopper-Pearson, from the regularized incomplete beta function and its inverse),
// Fisher's exact test of two rates (one-sided, also against an odds ratio other than 1, from
// log-gamma hypergeometric sums), the log Beta function (marginal likelihoods of counts under
// a Beta prior), the per-look level of a sequential design (Pocock's
// constant) and the sample size of a fixed design (Fleiss, Tytun and Ury).
//
// Everything is a pure function of counts: no I/O, no randomness, no globals. The tests pin
// the results to published reference values (R's binom.test and fisher.test outputs,
// Wikipedia's worked Fisher example, Pocock's table) and to exact rational arithmetic.
package stats
