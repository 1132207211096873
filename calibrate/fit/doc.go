// Package fit turns calibration measurements into the two statistical models
// the simulator samples or evaluates: kernel durations as irregular
// histograms, and 2D tile-copy (cudaMemcpy2D) times as piece-wise linear
// functions of the payload whose pieces depend on the matrix pitch.
//
// # Kernel durations: Bayesian Blocks histograms
//
// A kernel's duration is a random variable whose samples crowd around a mode
// while a few runs take ten times longer (paper §7). Regular bins either blur
// the mode or spend hundreds of empty bins on the tail, so FitHistogram builds
// an irregular histogram with Bayesian Blocks (Scargle et al. 2013, events
// mode): the optimal partition of the samples into blocks of constant density,
// found by dynamic programming, maximizing Σ N_k·ln(N_k/T_k) minus a prior
// ncp_prior per block, with the calibrated prior
// ncp_prior = 4 - ln(73.53·p0·N^-0.478), p0 = 0.05 (eq. 21). It was chosen
// over the penalized-likelihood histograms of Rozenholc, Mildenberger & Gather
// (2010), which the paper cites, because it has a single parameter with a
// meaning (the false-positive rate of a change point), needs no candidate grid
// or penalty constants on small data (block edges are the midpoints between
// consecutive distinct values), is exact, and has a widely used reference
// implementation (astropy) to compare with. On the test mixture it puts ~1σ
// bins on the mode and one or two wide bins on the tail: about 20 bins for
// 20 000 samples, 80 for 1e6.
//
// The exact program is O(n²) in the number n of distinct values, about 0.1 s
// at its limit of 4096. Larger sets are first merged into cells of
// ceil(N/2048) consecutive samples (a grid of empirical quantiles: fine where
// the mass is, coarse in the tail), and the blocks are searched over the cell
// edges: a change point moves by at most one cell, 1/2048 of the mass, and
// the prior keeps using the real sample count N. A value next to a gap wider
// than range/2048 keeps its own cell, exactly as unbinned: otherwise the cell
// bordering the empty region between the mode and the tail would carry up to
// N/2048 samples across it. 1e6 samples fit in ~0.15 s, mostly the sort.
//
// A histogram is sampled by inverting its piecewise-linear CDF
// (Histogram.Sample): the caller passes u in [0, 1) from the simulation's one
// seeded generator, so runs are reproducible and the package keeps no RNG.
// All-equal samples would make a zero-width bin of infinite density; that bin
// is widened to x ± 1e-9·x (clipped at 0).
//
// # Transfer times: segmented least squares per pitch
//
// The time of a copy is intercept + slope·bytes, but the line changes abruptly
// at some payloads and differs between pitches (paper §6, fig. 4). FitSegments
// finds the breakpoints by segmented least squares: a dynamic program over the
// sorted distinct payload sizes gives, for every number K of segments up to 8,
// the partition of least residual sum of squares (each segment at least 2
// sizes and 3 samples); K is chosen by the Bayesian information criterion,
// n·ln(RSS_K/n) + (3K-1)·ln n (K intercepts, K slopes, K-1 breakpoints). BIC
// rather than a fixed penalty because it needs no noise level, and rather
// than AIC because it is consistent: with 155 samples a spurious break must
// buy 15 units of log-likelihood (measured false-break rate about 1% per fit
// at 1% noise; a spurious segment still fits the data within noise).
// Residuals are relative — weights 1/duration² (median per size) — because
// timing noise is multiplicative: unweighted, the largest payloads dominate
// the RSS and hide breakpoints among small ones. Each segment is refit with
// stat.LinearRegression (same weights). A breakpoint sits at the smallest
// measured payload of the upper segment (the data cannot place it better
// between two measured sizes); the first segment extends down to 0 bytes and
// the last to +Inf so a model answers for every payload.
//
// FitPitchModels fits every measured pitch, then merges neighbouring pitches
// into one range while their models agree within MergeRelTol (3%) at every
// payload measured for both, checking a new pitch against each pitch already
// in the range so gradual drift cannot chain distinct regimes; a range is
// refit on its pooled samples. EvalUS uses the range containing the pitch,
// otherwise the nearest one: pitch effects are abrupt, so a neighbour's regime
// is a better guess than an interpolation.
package fit
