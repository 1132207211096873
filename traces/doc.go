// Package traces writes and reads starsim's and StarPU's trace formats.
package traces
