package dag

import (
	"maps"
	"slices"
)

// sortedKeys lists m's keys in order (determinism: no map order).
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
