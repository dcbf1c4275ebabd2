// Package bisect finds the first bad commit of an intermittent failure: a Bayesian model over
// "which commit of good..bad introduced it" that learns the failure rate from the steps (Model,
// Posterior), the choice of the next commits by expected information (Posterior.Choose), the
// bisection's state file (.debugflow/bisect.json) and its story (bisect log), and a simulation
// that compares it with a plain bisection repeating each step to the same confidence.
//
// The model, the selection rule and the stop rule are documented in docs/bisect.md.
package bisect
